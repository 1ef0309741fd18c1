{
    "name": "Wissensbasis Personalverrechnung",
    "summary": "Grounded question answering over a curated knowledge base on Austrian payroll law",
    "version": "19.0.1.0.0",
    "category": "Human Resources/Payroll",
    "author": "pv_kb team",
    "maintainers": ["pv_kb team"],
    "license": "LGPL-3",
    "depends": ["base", "web"],
    "external_dependencies": {"python": ["pgvector", "markdown", "PyYAML", "requests"]},
    "data": [
        "security/pv_kb_security.xml",
        "security/ir.model.access.csv",
        "data/pv.kb.synonym.csv",
        "data/pv_kb_cron.xml",
        "views/pv_kb_entry_views.xml",
        "views/pv_kb_chunk_views.xml",
        "views/pv_kb_batch_views.xml",
        "views/pv_kb_synonym_views.xml",
        "views/res_config_settings_views.xml",
        "views/pv_kb_query_views.xml",
        "wizards/pv_kb_import_wizard_views.xml",
        "views/pv_kb_menus.xml",
    ],
    "assets": {
        "web.assets_backend": [
            "pv_kb/static/src/**/*",
        ],
        "web.assets_unit_tests": [
            "pv_kb/static/tests/pv_kb_test_helpers.js",
            "pv_kb/static/tests/**/*.test.js",
        ],
        "web.assets_tests": [
            "pv_kb/static/tests/tours/**/*.js",
        ],
    },
    "application": True,
    "installable": True,
}
