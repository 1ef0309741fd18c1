"""Helpers for the Odoo tests: small contract-format batches built in memory."""
import io
import json
import os
import zipfile

from urllib.parse import urlsplit

from odoo.tests import TransactionCase
from odoo.tests.common import _super_send

DEMO_KB = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "demo_kb", "wissensbasis")
GOLDSET = os.path.join(os.path.dirname(DEMO_KB), "goldset.yaml")
PRAXIS_GOLDSET = os.path.join(os.path.dirname(DEMO_KB), "goldset_praxis.yaml")   # all held out


def entry_md(kb_id, *, title=None, stand="2026-01", topic="testthema", source="Lexis Briefings Personalrecht",
             tags=("Test",), legal_bases=("§ 1 TestG",), cross_refs=(), kernwerte=None, summary=None,
             payroll="Lohnart 100 prüfen.", extra_frontmatter=""):
    title = title or f"Testeintrag {kb_id}"
    summary = summary or f"Zusammenfassung von {kb_id}: Regeln zur Sonderzahlung und zum Jahressechstel."
    kernwerte = kernwerte or "| Wert | Betrag |\n|---|---|\n| Freibetrag | € 620 |\n| Steuersatz | 6 % |"

    def yaml_list(values):
        return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"

    return (
        f"---\nid: {kb_id}\ntitle: {title}\nstand: {stand}\ntopic: {topic}\nsource: {source}\n"
        f"tags: {yaml_list(tags)}\nlegal_bases: {yaml_list(legal_bases)}\ncross_refs: {yaml_list(cross_refs)}\n"
        f"{extra_frontmatter}---\n\n# {title}\n\n## Zusammenfassung\n{summary}\n\n"
        f"## Kernwerte & Fristen\n{kernwerte}\n\n## Rechtsgrundlagen\n- {legal_bases[0] if legal_bases else '§ 1 TestG'}\n\n"
        f"## Payroll-Relevanz (Odoo)\n{payroll}\n\n## Verweise\n"
        + "".join(f"- [{r}] siehe dort\n" for r in cross_refs)
    )


def kb_json(entries, count=None):
    """kb.json for {kb_id: markdown} (fields as the frontmatter says)."""
    import yaml

    records = []
    for kb_id, md in sorted(entries.items()):
        front = yaml.safe_load(md.split("---")[1])
        records.append({
            "id": kb_id, "title": front["title"], "stand": str(front["stand"]), "topic": front["topic"],
            "source": front["source"], "file": f"dokumente/{kb_id}.md", "tags": front.get("tags") or [],
            "legal_bases": front.get("legal_bases") or [], "cross_refs": front.get("cross_refs") or [],
        })
    return json.dumps({"generated": "2026-11-29T12:00:00", "count": len(records) if count is None else count,
                       "entries": records}, ensure_ascii=False).encode()


def batch_files(entries, *, kbjson=True, raw=None):
    """Files dict (paths relative to the KB root) for {kb_id: markdown}; ``raw`` adds/overrides bytes."""
    files = {f"dokumente/{kb_id}.md": md.encode("utf-8") for kb_id, md in entries.items()}
    if kbjson:
        files["kb.json"] = kb_json(entries)
    files.update(raw or {})
    return files


def zip_bytes(files, prefix="wissensbasis/"):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            zf.writestr(prefix + path, data)
    return buf.getvalue()


class KbCase(TransactionCase):
    """Base class: an importer and a snapshot of the knowledge base tables."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.importer = cls.env["pv.kb.importer"]
        cls.Entry = cls.env["pv.kb.entry"].with_context(active_test=False)
        cls.Chunk = cls.env["pv.kb.chunk"]

    def run_import(self, files, **kw):
        kw.setdefault("source_name", "test")
        return self.importer._run(files, **kw)

    def snapshot(self):
        """Everything an import may change, as comparable data."""
        self.env.flush_all()
        cr = self.env.cr
        cr.execute("SELECT kb_id, name, stand, content_hash, active, dangling_refs FROM pv_kb_entry ORDER BY kb_id")
        entries = cr.fetchall()
        cr.execute("SELECT id, kb_id, position, content_hash, embedding IS NOT NULL FROM pv_kb_chunk ORDER BY id")
        chunks = cr.fetchall()
        cr.execute("SELECT entry_id, ref_id FROM pv_kb_entry_cross_ref_rel ORDER BY 1, 2")
        return entries, chunks, cr.fetchall()


class StandInCase(KbCase):
    """A KbCase with a local Ollama stand-in (hash embeddings unless told otherwise) and the settings pointing to it."""

    @classmethod
    def _request_handler(cls, s, r, /, **kw):
        # Odoo's test harness raises short timeouts to 10 s and cannot take requests' (connect, read)
        # tuples; calls to the stand-in on loopback keep the client's own timeouts.
        if urlsplit(r.url).hostname in ("127.0.0.1", "localhost"):
            return _super_send(s, r, **kw)
        return super()._request_handler(s, r, **kw)

    # 1024 dimensions like the column the addon creates at install: no DDL inside the test transaction
    # (an index built there cannot be used by the planner before the transaction ends)
    embed_models = {"hash-embed": "hash:1024"}
    embedding_model = "hash-embed"
    query_prefix = passage_prefix = ""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        from odoo.addons.pv_kb.testing.standin import OllamaStandIn

        cls.standin = OllamaStandIn(embed_models=dict(cls.embed_models), request_overhead_ms=0).start()
        cls.addClassCleanup(cls.standin.stop)
        cls.set_settings(ollama_url=cls.standin.url, embedding_model=cls.embedding_model, chat_model="standin-chat",
                         query_prefix=cls.query_prefix, passage_prefix=cls.passage_prefix, embed_batch_size=16,
                         read_timeout=10, connect_timeout=2, answer_time_limit=20)

    @classmethod
    def set_settings(cls, **values):
        params = cls.env["ir.config_parameter"].sudo()
        for key, value in values.items():
            params.set_param(f"pv_kb.{key}", value)

    @classmethod
    def load_entries(cls, entries, source_name="test"):
        """Import ``entries`` ({path: text}, see ``batch_files``) for the whole class and embed them."""
        cls.env["pv.kb.importer"]._run(batch_files(entries), source_name=source_name)
        cls.env["pv.kb.chunk"]._embed_pending()

    def chat_requests(self):
        """The chat requests the stand-in received since this test began."""
        return [r for r in self.standin.requests_log if r["path"] in ("/api/chat", "/v1/chat/completions")]

    def setUp(self):
        super().setUp()
        self.standin.reset()

    def import_demo(self):
        files = self.importer._read_source(path=DEMO_KB)
        result = self.importer._run(files, source_name="demo")
        self.assertTrue(result.ok, result.report)
        return result

    def embed_all(self):
        return self.env["pv.kb.chunk"]._embed_pending()


