"""The personal-data gate's glue: the one place that makes a ``pii.Gated`` from a request's texts.

Its settings (on/off, detectors, allow-list) are declared in ``lib/settings/table.py``; the known names come
from contacts and, with ``hr``, employees. The gate itself is ``lib/pii/gate.py``.
"""
import threading

from odoo import api, models

from ..lib.pii import gate as pii, names as pii_names
from ..lib.settings import table

# known names per database and process: (signature of the source tables, pii_names.KnownNames)
_KNOWN_NAMES = {}
_KNOWN_NAMES_LOCK = threading.Lock()


class PvKbSettings(models.AbstractModel):
    """The gate is reached through the settings model: ``env["pv.kb.settings"]._pii_gate(...)``."""

    _inherit = "pv.kb.settings"

    @api.model
    def _pii_config(self):
        """Gate settings, from the stored parameters only: never from overrides or the context (no caller may
        switch the gate off)."""
        stored = self._get()
        detectors = table.csv_items(stored["pii_detectors"]) or list(pii.DETECTORS)
        allow = [line.strip() for line in (stored["pii_allow_list"] or "").splitlines() if line.strip()]
        return {"enabled": stored["pii_gate"], "detectors": detectors, "allow_list": allow}

    @api.model
    def _pii_known_names(self):
        """(known names, company names): employees (if ``hr`` is installed) and contacts that are persons.

        Cached per process; one query per question checks count and last write of the sources. New or
        changed contacts are added to the index (a renamed contact's old name stays masked until the next
        full rebuild, which happens when contacts were archived or deleted or a company changed). Names of
        one word are left out: a contact called "Lohnbüro" is a function, not a person. The companies' own
        names are never masked (allow-list).
        """
        has_hr = "hr.employee" in self.env
        self.env.flush_all()
        self.env.cr.execute("""
            SELECT (SELECT count(*) FROM res_partner WHERE active AND NOT COALESCE(is_company, false)
                                                      AND name IS NOT NULL),
                   (SELECT max(write_date) FROM res_partner),
                   (SELECT count(*) FROM res_company), (SELECT max(write_date) FROM res_company)""")
        p_count, p_last, c_count, c_last = self.env.cr.fetchone()
        e_count = e_last = None
        if has_hr:
            [(e_count, e_last)] = self.env["hr.employee"].sudo()._read_group(
                [], aggregates=["__count", "write_date:max"])
        signature = (p_count, p_last, c_count, c_last, e_count, e_last)
        key = self.env.cr.dbname
        cached = _KNOWN_NAMES.get(key)
        if cached and cached["signature"] == signature:
            return cached["known"], cached["companies"]

        def person_names(since=None):
            domain = [("is_company", "=", False), ("name", "!=", False)]
            names = self.env["res.partner"].sudo().search(domain + ([("write_date", ">=", since)] if since else []))
            names = set(names.mapped("name"))
            if has_hr:
                names |= set(self.env["hr.employee"].sudo().search(
                    [("write_date", ">=", since)] if since else []).mapped("name"))
            return sorted(n for n in names if n and len(n.split()) >= 2)

        old = cached["signature"] if cached else None
        grown = (old and old[2:4] == signature[2:4] and p_count >= old[0]
                 and (not has_hr or (old[4] is not None and e_count >= old[4]))
                 # names added again on every edit: rebuild once the index holds twice the people
                 and len(cached["known"].names) <= 2 * (p_count + (e_count or 0)) + 100)
        with _KNOWN_NAMES_LOCK:
            if grown:
                # only what was written since the last look (>=: rows of that same instant again, harmless)
                cached["known"].add(person_names(since=min((d for d in (old[1], old[5]) if d), default=None)))
                cached["signature"] = signature
            else:
                companies = tuple(n for n in self.env["res.company"].sudo().search([]).mapped("name") if n)
                known = pii_names.KnownNames.build(person_names())
                _KNOWN_NAMES[key] = cached = {"signature": signature, "known": known, "companies": companies}
        return cached["known"], cached["companies"]

    @api.model
    def _pii_gate(self, question, *, query=None, history=None, mapping=None):
        """Neutralise everything of a request that carries user text: question, standalone query, history.

        Returns a ``pii.Gated`` (what the Ollama client requires); with the gate switched off in the
        settings the texts pass unchanged (still marked). Raises ``pii.PiiGateError`` on any failure:
        the caller then sends nothing (fail closed).
        """
        try:
            config = self._pii_config()
            detectors = config["detectors"] if config["enabled"] else []
            known, companies = self._pii_known_names()
            if not isinstance(mapping, pii.Mapping):
                mapping = pii.Mapping.from_dict(mapping)
            return pii.gate_request(question, query=query, history=history,
                                    known_names=known if "name" in detectors else None,
                                    allow_list=config["allow_list"] + list(companies), detectors=detectors,
                                    mapping=mapping)
        except pii.PiiGateError:
            raise
        except Exception as exc:  # noqa: BLE001 - fail closed: whatever went wrong, nothing is sent
            raise pii.PiiGateError(f"{type(exc).__name__}: {exc}") from exc
