"""19.0.1.1.0: runs stored before ``pv.kb.eval.run.goldset_part`` existed get it from the label their name
carries ("… (held-out)", "… (Tuning-Teil)"); other runs stay without a part (shown without the default
"Held-out part" filter). A slice of a part ("… [30–30]", ``--offset``/``--limit``) is not comparable with
a whole part and stays without one too."""


def migrate(cr, version):
    cr.execute("""
        UPDATE pv_kb_eval_run
           SET goldset_part = CASE WHEN goldset_name LIKE '%%(held-out)%%' THEN 'test' ELSE 'tuning' END
         WHERE goldset_part IS NULL AND goldset_name NOT LIKE '%%[%%'
           AND (goldset_name LIKE '%%(held-out)%%' OR goldset_name LIKE '%%(Tuning-Teil)%%')""")
