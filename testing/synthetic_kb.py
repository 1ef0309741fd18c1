"""Generate a synthetic Wissensbasis in the pv_kb contract format.

The output imitates the customer's base in shape (clusters, entry sizes,
sections, tables, cross references) but not in content: the entries are
German payroll-like distractors built from templates and random values.
They use real payroll vocabulary on purpose, so that retrieval tests face
hard distractors, yet they state no real facts and never copy the demo base.

Usage::

    python scripts/gen_synthetic_kb.py OUT_DIR [--entries 601] [--seed 7]
        [--prefix syn] [--dangling 0] [--zip OUT.zip]

writes ``OUT_DIR/wissensbasis/{INDEX.md,kb.json,dokumente/*.md}``. The
output depends only on the arguments (same seed, same bytes). Only the
standard library is used. The command is ``scripts/gen_synthetic_kb.py`` (:func:`main`).

Throughput (measured in the development container with
``time python scripts/gen_synthetic_kb.py /tmp/syn --entries N --seed 7``,
including the summary the CLI prints):
601 entries -> 2,992 sections, 4.7 MB, median 7.0 KB, largest 30.3 KB in
about 0.9 s; 20,000 entries -> 99,441 sections (the 100,000-chunk scale
test), 158 MB in about 18 s, dominated by writing the files.

``write_kb_json(kb_root)`` regenerates ``kb.json`` for any contract-format
base (it is also used for the demo base shipped with the addon), and
``write_index(kb_root)`` regenerates ``INDEX.md``.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import pathlib
import random
import re
import statistics
import time
import zipfile

SECTIONS = (
    "Zusammenfassung",
    "Kernwerte & Fristen",
    "Rechtsgrundlagen",
    "Payroll-Relevanz (Odoo)",
    "Verweise",
)

ENTRY_FIELDS = ("id", "title", "stand", "topic", "source", "file", "tags", "legal_bases", "cross_refs")
LIST_FIELDS = ("tags", "legal_bases", "cross_refs")
SYNTHETIC_GENERATED = "2025-01-01T00:00:00+00:00"

# 69 clusters: (topic key, German label). The abbreviation used inside the ids
# is derived from the key (see _abbreviations).
CLUSTERS = (
    ("sonderzahlungen", "Sonderzahlungen"), ("sachbezuege", "Sachbezüge"), ("urlaub", "Urlaub"),
    ("entgeltfortzahlung", "Entgeltfortzahlung"), ("abfertigung", "Abfertigung"),
    ("geringfuegig", "Geringfügige Beschäftigung"), ("ueberstunden", "Überstunden"),
    ("altersteilzeit", "Altersteilzeit"), ("pendler", "Pendlerförderung"), ("reisekosten", "Reisekosten"),
    ("lohnnebenkosten", "Lohnnebenkosten"), ("sozialversicherung", "Sozialversicherung"),
    ("lohnsteuer", "Lohnsteuer"), ("beendigung", "Beendigung"), ("mutterschutz_karenz", "Mutterschutz und Karenz"),
    ("lehrlinge", "Lehrlinge"), ("freie_dienstnehmer", "Freie Dienstnehmer"), ("kurzarbeit", "Kurzarbeit"),
    ("bildungskarenz", "Bildungskarenz"), ("pflegefreistellung", "Pflegefreistellung"),
    ("arbeitszeit", "Arbeitszeitmodelle"), ("teilzeit", "Teilzeit und Mehrarbeit"),
    ("all_in", "All-in-Vereinbarungen"), ("zulagen", "Zulagen und Zuschläge"),
    ("kollektivvertrag", "Kollektivverträge"), ("betriebsvereinbarung", "Betriebsvereinbarungen"),
    ("lohnpfaendung", "Lohnpfändung"), ("aufrollung", "Aufrollung"),
    ("lohnzettel", "Lohnzettel und Jahresmeldungen"), ("mbgm", "Beitragsgrundlagenmeldung"),
    ("elda", "ELDA-Meldewesen"), ("entsendung", "Entsendung ins Ausland"), ("grenzgaenger", "Grenzgänger"),
    ("homeoffice", "Homeoffice"), ("mitarbeiterbeteiligung", "Mitarbeiterbeteiligung"),
    ("gewinnbeteiligung", "Gewinnbeteiligung"), ("zukunftssicherung", "Zukunftssicherung und Pensionskassen"),
    ("essensbons", "Essensgutscheine"), ("jobticket", "Öffi-Tickets"),
    ("kinderbetreuung", "Kinderbetreuungszuschuss"), ("betriebsveranstaltung", "Betriebsveranstaltungen"),
    ("jubilaeum", "Jubiläumsgelder"), ("praemien", "Prämien und Boni"), ("provisionen", "Provisionen"),
    ("akkord", "Akkordentlohnung"), ("schichtarbeit", "Schichtarbeit"), ("nachtschwerarbeit", "Nachtschwerarbeit"),
    ("bauarbeiter", "Bauarbeiter und BUAK"), ("saison", "Saisonbeschäftigung"),
    ("praktikanten", "Praktikanten und Volontäre"), ("geschaeftsfuehrer", "Geschäftsführer"),
    ("behinderung", "Begünstigte Behinderte"), ("wiedereingliederung", "Wiedereingliederung"),
    ("krankengeld", "Krankengeld"), ("unfallversicherung", "Unfallversicherung"),
    ("insolvenz", "Insolvenzentgelt"), ("dienstzettel", "Dienstzettel und Dienstvertrag"),
    ("gleichbehandlung", "Gleichbehandlung und Entgelttransparenz"), ("lsdbg", "Lohn- und Sozialdumping"),
    ("verfall", "Verjährung und Verfall"), ("datenschutz", "Datenschutz in der Personalverrechnung"),
    ("lohnkonto", "Lohnkonto"), ("plb", "Lohnabgabenprüfung"), ("veranlagung", "Arbeitnehmerveranlagung"),
    ("familienbonus", "Familienbonus"), ("zuschuesse", "Zuschüsse des Arbeitgebers"),
    ("auslandsreisen", "Auslandsreisen"), ("vordienstzeiten", "Vordienstzeiten"), ("pflegekarenz", "Pflegekarenz"),
)

TERMS = (
    "Beitragsgrundlage", "Bemessungsgrundlage", "Lohnart", "Sonderzahlung", "Sachbezug", "Jahressechstel",
    "Höchstbeitragsgrundlage", "Freibetrag", "Freigrenze", "Kollektivvertrag", "Betriebsvereinbarung",
    "Dienstzettel", "Lohnkonto", "Lohnzettel", "Aufrollung", "Nachverrechnung", "Akontozahlung",
    "Urlaubsentgelt", "Krankenentgelt", "Zeitausgleich", "Gleitzeitsaldo", "Durchrechnungszeitraum",
    "Normalarbeitszeit", "Überstundenpauschale", "Zulage", "Zuschlag", "Diäten", "Kilometergeld",
    "Dienstgeberbeitrag", "Kommunalsteuer", "Kammerumlage", "BV-Beitrag", "Arbeitslosenversicherung",
    "Pensionsversicherung", "Krankenversicherung", "Unfallversicherung", "Wohnbauförderungsbeitrag",
    "Absetzbetrag", "Werbungskosten", "Pendlerpauschale", "Familienbonus", "Lohnsteuertabelle",
    "Tarifstufe", "Einschleifregelung", "Sechstelüberhang", "Ersatzleistung", "Kündigungsentschädigung",
    "Abfertigungsanspruch", "Karenzzeit", "Wochengeld", "Krankengeld", "Arbeitsjahr", "Kalenderjahr",
    "Einstufung", "Vorrückung", "Ist-Lohn", "Mindestlohn", "Deckungsprüfung", "Stichtag", "Beitragszeitraum",
)

LAWS = (
    "§ 49 ASVG", "§ 44 ASVG", "§ 45 ASVG", "§ 33 ASVG", "§ 34 ASVG", "§ 53a ASVG", "§ 67 EStG", "§ 68 EStG",
    "§ 3 EStG", "§ 15 EStG", "§ 16 EStG", "§ 26 EStG", "§ 33 EStG", "§ 62 EStG", "§ 77 EStG", "§ 84 EStG",
    "§ 41 FLAG", "§ 5 KommStG", "§ 8 AngG", "§ 16 AngG", "§ 20 AngG", "§ 23 AngG", "§ 2 UrlG", "§ 10 UrlG",
    "§ 2 EFZG", "§ 6 BMSVG", "§ 14 BMSVG", "§ 27 AlVG", "§ 37b AMSG", "§ 10 AZG", "§ 4 AZG", "§ 19d AZG",
    "§ 1159 ABGB", "§ 1152 ABGB", "§ 13a AVRAG", "§ 11 AVRAG", "§ 16 AVRAG", "§ 15 MSchG", "§ 8 VKG",
    "§ 17 BAG", "§ 29 LSD-BG", "§ 2 DHG", "§ 290 EO", "§ 21 BEinstG",
)

ASPECTS = (
    "Grundlagen", "Sonderfälle", "Aufrollung und Korrektur", "Meldepflichten", "Fristen und Termine",
    "Praxisfälle", "Abgrenzungsfragen", "Kollektivvertragliche Besonderheiten", "Berechnungsschema",
    "Ein- und Austritt während des Monats", "Teilzeitbeschäftigte", "Prüfungsschwerpunkte",
    "Dokumentation im Lohnkonto", "Zusammenspiel mit anderen Bezügen", "Übergangsregelungen",
    "Häufige Fehler", "Verwaltungspraxis", "Rechtsprechung im Überblick",
)

ACTORS = (
    "der Dienstgeber", "die Lohnverrechnung", "die Personalabteilung", "der Arbeitgeber", "das Lohnbüro",
    "die Steuerberatung", "die Betriebsprüfung", "der Betriebsrat", "die ÖGK", "das Finanzamt",
)
PERSONS = ("der Dienstnehmer", "die Arbeitnehmerin", "die Angestellte", "der Arbeiter", "der Lehrling",
           "die Teilzeitkraft", "der Außendienstmitarbeiter", "die geringfügig Beschäftigte",
           "die Schichtarbeiterin", "die Geschäftsführerin")
PERIODS = ("im Kalendermonat", "im Abrechnungszeitraum", "im Kalenderjahr", "im Arbeitsjahr",
           "im Beobachtungszeitraum", "im Durchrechnungszeitraum", "bis zum Stichtag", "im Quartal")
VERBS = ("zu berücksichtigen", "gesondert auszuweisen", "aufzurollen", "neu zu berechnen", "zu kürzen",
         "anteilig anzusetzen", "zu dokumentieren", "zu melden", "nachzuverrechnen", "zu prüfen")

SENTENCES = (
    "Für {t1} ist nach {law} zunächst zu prüfen, ob {t2} {period} bereits erfasst wurde.",
    "{A} hat {t1} {period} {verb}, wenn {p} die Voraussetzungen nur teilweise erfüllt.",
    "In der Praxis wird {t1} häufig mit {t2} verwechselt, obwohl beide unterschiedlich behandelt werden.",
    "Ein Wert von {eur} gilt in diesem Zusammenhang nur als Orientierung und ersetzt keine Einzelfallprüfung.",
    "Liegt {t1} über {eur}, ist der übersteigende Teil mit {pct} {verb}.",
    "Die Verwaltungspraxis stellt bei {t1} auf die tatsächlichen Verhältnisse {period} ab.",
    "Wird {t1} rückwirkend geändert, ist {t2} für alle betroffenen Monate {verb}.",
    "{A} sollte {t1} und {t2} im Lohnkonto getrennt führen, um spätere Prüfungen zu erleichtern.",
    "Nach Ansicht der Lehre ist {t1} eng auszulegen; die Rechtsprechung ist hier nicht einheitlich.",
    "Hat {p} ein wechselndes Beschäftigungsausmaß, ist {t1} {period} anteilig zu ermitteln.",
    "Für {topic} sieht {law} eine eigene Regel vor, die {t1} ausdrücklich einschließt.",
    "Ob {t1} beitragspflichtig ist, hängt davon ab, ob ein Rechtsanspruch auf {t2} besteht.",
    "Eine Frist von {days} Tagen beginnt mit dem Ende des Monats, in dem {t1} entstanden ist.",
    "Übersteigt {t1} {period} den Betrag von {eur}, entfällt die Begünstigung für {t2} zur Gänze.",
    "Im Beispiel erhält {p} {eur} als {t1}; davon sind {pct} als {t2} zu behandeln.",
    "{A} muss die Unterlagen zu {t1} mindestens {years} Jahre aufbewahren.",
    "Wird {p} während des Monats eingestellt, ist {t1} nach Kalendertagen {verb}.",
    "Die Kollektivverträge regeln {t1} sehr unterschiedlich, weshalb eine allgemeine Aussage kaum möglich ist.",
    "Fehlt eine Vereinbarung über {t1}, gilt die Regel aus {law} subsidiär.",
    "Für {topic} ist entscheidend, ob {t1} laufend oder nur einmalig gewährt wird.",
    "Eine nachträgliche Korrektur von {t1} führt regelmäßig auch zu einer Änderung von {t2}.",
    "Mit einem Anteil von {pct} liegt {t1} im Rahmen dessen, was Prüfer üblicherweise akzeptieren.",
    "Die Höhe von {t1} richtet sich nach dem Durchschnitt der letzten {weeks} Wochen.",
    "{A} kann {t1} auch in Form von {t2} abgelten, sofern dies schriftlich vereinbart ist.",
    "Bei Wechsel des Arbeitszeitmodells ist {t1} für die Zeit vor und nach der Änderung getrennt {verb}.",
    "Im Rahmen von {topic} wird {t1} erst mit der Auszahlung wirksam, nicht schon mit der Vereinbarung.",
)

PAYROLL_SENTENCES = (
    "Die Lohnart für {t1} benötigt eine eigene Steuer- und Beitragskennung.",
    "In Odoo wird {t1} als Regel der Gehaltsstruktur abgebildet, die auf {t2} zugreift.",
    "Der Parameter für {t1} sollte datumsabhängig gepflegt werden, damit Aufrollungen korrekt rechnen.",
    "Für die Auswertung von {topic} empfiehlt sich ein eigener Bericht je Abrechnungskreis.",
    "Bei Korrekturen von {t1} erzeugt die Abrechnung automatisch eine Differenzzeile für {t2}.",
    "Die Zuordnung zu {t1} erfolgt über ein Kennzeichen am Dienstvertrag, wenn {p} betroffen ist.",
    "Ein Plausibilitätscheck warnt, wenn {t1} {period} den Wert von {eur} überschreitet.",
    "{t1} fließt mit {pct} in die Bemessungsgrundlage für {t2} ein.",
)

ROW_LABELS = ("Grenzbetrag", "Satz", "Frist", "Meldung", "Zeitraum", "Mindestdauer", "Höchstbetrag",
              "Prozentsatz", "Stichtag", "Anrechnung", "Kürzung", "Wartezeit")

# --------------------------------------------------------------------------- frontmatter helpers

def _split_flow_list(body: str) -> list[str]:
    """Split the inside of a YAML flow sequence into plain strings (quotes honoured)."""
    items: list[str] = []
    buf: list[str] = []
    quote = ""
    i = 0
    while i < len(body):
        ch = body[i]
        if quote:
            if ch == "\\" and quote == '"' and i + 1 < len(body):
                buf.append(json.loads('"' + body[i:i + 2] + '"'))
                i += 2
                continue
            if ch == quote:
                if quote == "'" and body[i + 1:i + 2] == "'":
                    buf.append("'")
                    i += 2
                    continue
                quote = ""
            else:
                buf.append(ch)
        elif ch in "\"'":
            quote = ch
        elif ch == ",":
            items.append("".join(buf).strip())
            buf = []
        else:
            buf.append(ch)
        i += 1
    last = "".join(buf).strip()
    if last or items:
        items.append(last)
    return [x for x in items if x != ""]


def _scalar(raw: str) -> str:
    raw = raw.strip()
    if raw[:1] in "\"'" and raw[-1:] == raw[:1] and len(raw) >= 2:
        inner = raw[1:-1]
        return json.loads(raw) if raw[0] == '"' else inner.replace("''", "'")
    return re.split(r"\s+#", raw, maxsplit=1)[0].strip()


def read_frontmatter(path: pathlib.Path) -> dict:
    """Return the frontmatter of an entry file as a dict of strings and string lists.

    Only the subset of YAML the contract uses is understood: ``key: value``
    lines and flow lists ``[a, "b c"]``. Raises ValueError if the file does
    not start with a ``---`` block.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError(f"{path.name}: frontmatter fehlt")
    meta: dict = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return meta
        if not line.strip() or line.lstrip().startswith("#") or ":" not in line:
            continue
        key, raw = line.split(":", 1)
        raw = raw.strip()
        if raw.startswith("["):
            meta[key.strip()] = _split_flow_list(raw[1:raw.rindex("]")])
        else:
            meta[key.strip()] = _scalar(raw)
    raise ValueError(f"{path.name}: frontmatter nicht abgeschlossen")


def collect_entries(kb_root: pathlib.Path) -> list[dict]:
    """Read all ``dokumente/*.md`` below kb_root and return kb.json records sorted by id."""
    kb_root = pathlib.Path(kb_root)
    records = []
    for path in sorted((kb_root / "dokumente").glob("*.md")):
        meta = read_frontmatter(path)
        rec = {key: meta.get(key, [] if key in LIST_FIELDS else "") for key in ENTRY_FIELDS}
        rec["stand"] = str(rec["stand"])
        rec["file"] = f"dokumente/{path.name}"
        records.append(rec)
    records.sort(key=lambda r: r["id"])
    return records


def write_kb_json(kb_root, generated: str | None = None) -> pathlib.Path:
    """(Re)generate ``kb_root/kb.json`` from the entry files and return its path.

    ``generated`` defaults to the current UTC time in ISO format.
    """
    kb_root = pathlib.Path(kb_root)
    entries = collect_entries(kb_root)
    stamp = generated or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    data = {"generated": stamp, "count": len(entries), "entries": entries}
    out = kb_root / "kb.json"
    out.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return out


def write_index(kb_root, title: str = "Wissensbasis Personalverrechnung – Index") -> pathlib.Path:
    """(Re)generate ``kb_root/INDEX.md``: one H2 per cluster (topic), a bullet per entry."""
    kb_root = pathlib.Path(kb_root)
    by_topic: dict[str, list[dict]] = {}
    for rec in collect_entries(kb_root):
        by_topic.setdefault(rec["topic"], []).append(rec)
    lines = [f"# {title}", ""]
    for topic in sorted(by_topic):
        lines += [f"## {topic}", ""]
        lines += [f"- [{r['id']}] {r['title']} (Stand {r['stand']})" for r in by_topic[topic]]
        lines.append("")
    out = kb_root / "INDEX.md"
    out.write_text("\n".join(lines), encoding="utf-8")
    return out


# --------------------------------------------------------------------------- synthetic text

def _abbreviations() -> list[str]:
    seen: set[str] = set()
    out = []
    for key, _label in CLUSTERS:
        base = key.replace("_", "")[:4]
        abbr, n = base, 2
        while abbr in seen:
            abbr, n = f"{base}{n}", n + 1
        seen.add(abbr)
        out.append(abbr)
    return out


def _eur(rng: random.Random) -> str:
    value = rng.randint(1000, 9_999_999) / 100
    whole, cents = f"{value:.2f}".split(".")
    whole = f"{int(whole):,}".replace(",", ".")
    return f"€ {whole},{cents}"


def _pct(rng: random.Random) -> str:
    # always one decimal ("7,3 %"): never collides with round real rates like "6 %"
    return f"{rng.randint(1, 499) / 10:.1f}".replace(".", ",") + " %"


def _fill(template: str, rng: random.Random, topic_label: str) -> str:
    t1, t2 = rng.sample(TERMS, 2)
    text = template.format(
        t1=t1, t2=t2, law=rng.choice(LAWS), period=rng.choice(PERIODS), verb=rng.choice(VERBS),
        p=rng.choice(PERSONS), A=rng.choice(ACTORS), eur=_eur(rng), pct=_pct(rng),
        days=rng.choice((7, 14, 21, 30, 45, 60, 90)), years=rng.choice((3, 5, 7, 10)),
        weeks=rng.choice((4, 8, 12, 13, 26)), topic=topic_label,
    )
    return text[0].upper() + text[1:]


def _paragraphs(rng: random.Random, budget: int, label: str, pool=SENTENCES) -> list[str]:
    paras, size = [], 0
    while size < budget:
        sent = [_fill(rng.choice(pool), rng, label) for _ in range(rng.randint(3, 6))]
        para = " ".join(sent)
        paras.append(para)
        size += len(para) + 2
    return paras


def _table(rng: random.Random, label: str) -> list[str]:
    rows = ["| Punkt | Wert | Stand |", "|---|---|---|"]
    for _ in range(rng.randint(3, 8)):
        value = rng.choice((_eur(rng), _pct(rng), f"{rng.randint(2, 52)} Wochen", f"{rng.randint(1, 36)} Monate"))
        rows.append(f"| {rng.choice(ROW_LABELS)} {rng.choice(TERMS)} | {value} | {rng.randint(2016, 2025)} |")
    return rows


def _target_size(rng: random.Random) -> int:
    # log-normal around a median of about 7 KB, clipped to the customer's range
    return int(min(29000, max(1500, rng.lognormvariate(math.log(6900), 0.5))))


def _entry_text(rng, meta, label, target, refs_text) -> str:
    fm = [
        "---",
        f"id: {meta['id']}",
        f"title: {meta['title']}",
        f"stand: {meta['stand']}",
        f"topic: {meta['topic']}",
        f"source: {meta['source']}",
        "tags: [" + ", ".join(meta["tags"]) + "]",
        "legal_bases: [" + ", ".join(json.dumps(x, ensure_ascii=False) for x in meta["legal_bases"]) + "]",
        "cross_refs: [" + ", ".join(meta["cross_refs"]) + "]",
        "---",
        "",
        f"# {meta['title']}",
        "",
    ]
    skip = rng.choice(SECTIONS[1:4]) if rng.random() < 0.03 else None
    out = list(fm)
    for name in SECTIONS:
        if name == skip:
            continue
        out += [f"## {name}"]
        if name == "Zusammenfassung":
            paras = _paragraphs(rng, int(target * 0.55), label)
            with_h3 = target > 9000 or rng.random() < 0.25
            for i, para in enumerate(paras):
                if with_h3 and i and i % 3 == 0:
                    out += [f"### {rng.choice(ASPECTS)}"]
                out += [para, ""]
        elif name == "Kernwerte & Fristen":
            if rng.random() < 0.75:
                out += _table(rng, label) + [""]
            else:
                out += [f"- {rng.choice(ROW_LABELS)}: {_eur(rng)}" for _ in range(rng.randint(2, 5))] + [""]
        elif name == "Rechtsgrundlagen":
            out += [f"- {law} – {rng.choice(ASPECTS)}" for law in meta["legal_bases"]] + [""]
        elif name == "Payroll-Relevanz (Odoo)":
            for para in _paragraphs(rng, int(target * 0.25), label, PAYROLL_SENTENCES):
                out += [para, ""]
        else:
            out += refs_text + [f"- Siehe auch die übrigen Einträge zu {label}."] + [""]
    return "\n".join(out)


def generate(out_dir, entries: int = 601, seed: int = 7, prefix: str = "syn", dangling: int = 0) -> pathlib.Path:
    """Write a synthetic base to ``out_dir/wissensbasis`` and return that folder.

    The result depends only on the arguments. ``dangling`` cross references
    point to ids that do not exist (to test the import's error report).
    """
    if entries < 1:
        raise ValueError("entries must be at least 1")
    rng = random.Random(seed)
    root = pathlib.Path(out_dir) / "wissensbasis"
    docs = root / "dokumente"
    docs.mkdir(parents=True, exist_ok=True)
    for old in docs.glob("*.md"):
        old.unlink()
    abbrs = _abbreviations()
    counters = [0] * len(CLUSTERS)
    plan = []
    for i in range(entries):
        c = i % len(CLUSTERS) if i < len(CLUSTERS) else rng.randrange(len(CLUSTERS))
        counters[c] += 1
        plan.append((c, f"{prefix}-{abbrs[c]}-{counters[c]:03d}"))
    ids = [pid for _c, pid in plan]
    missing = [f"{prefix}-{abbrs[k % len(abbrs)]}-{counters[k % len(abbrs)] + 100 + k:03d}" for k in range(dangling)]
    dangling_at: dict[int, list[str]] = {}
    for k, ref in enumerate(missing):
        dangling_at.setdefault((k * 7919) % entries, []).append(ref)
    big = entries // 2 if entries >= 10 else -1
    for i, (c, eid) in enumerate(plan):
        key, label = CLUSTERS[c]
        refs = sorted(set(rng.sample(ids, min(len(ids), rng.randint(0, 4)))) - {eid})
        refs += dangling_at.get(i, [])
        year = rng.randint(2015, 2025)
        stand = f"{year}-{rng.randint(1, 12):02d}"
        if rng.random() < 0.05:
            stand += f"-{rng.randint(1, 28):02d}"
        meta = {
            "id": eid,
            "title": f"{label} – {rng.choice(ASPECTS)}",
            "stand": stand,
            "topic": key,
            "source": "WIKU" if rng.random() < 0.05 else "Lexis Briefings Personalrecht",
            "tags": [label] + rng.sample(TERMS, rng.randint(2, 5)),
            "legal_bases": rng.sample(LAWS, rng.randint(1, 4)),
            "cross_refs": refs,
        }
        refs_text = [f"- [{r}] {rng.choice(ASPECTS)}" for r in refs]
        target = 35000 if i == big else _target_size(rng)
        text = _entry_text(rng, meta, label, target, refs_text)
        (docs / f"{eid}.md").write_text(text + "\n", encoding="utf-8")
    write_kb_json(root, generated=SYNTHETIC_GENERATED)
    write_index(root, title="Synthetische Wissensbasis – Index")
    return root


def write_zip(kb_root, zip_path) -> pathlib.Path:
    """Pack a base folder into a zip with ``wissensbasis/`` as top folder (fixed timestamps)."""
    kb_root = pathlib.Path(kb_root)
    zip_path = pathlib.Path(zip_path)
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(kb_root.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo(f"wissensbasis/{path.relative_to(kb_root).as_posix()}", (1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, path.read_bytes())
    return zip_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Synthetische Wissensbasis im pv_kb-Format erzeugen.")
    parser.add_argument("out_dir")
    parser.add_argument("--entries", type=int, default=601)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--prefix", default="syn")
    parser.add_argument("--dangling", type=int, default=0, help="Anzahl absichtlich ungültiger cross_refs")
    parser.add_argument("--zip", dest="zip_path", help="zusätzlich als Zip-Datei ablegen")
    args = parser.parse_args(argv)
    if args.entries < 1:
        parser.error("--entries muss mindestens 1 sein.")
    if not re.match(r"^[a-z0-9]+$", args.prefix):
        parser.error("--prefix darf nur Kleinbuchstaben und Ziffern enthalten.")
    started = time.perf_counter()
    root = generate(args.out_dir, args.entries, args.seed, args.prefix, args.dangling)
    if args.zip_path:
        write_zip(root, args.zip_path)
    elapsed = time.perf_counter() - started
    sizes = [p.stat().st_size for p in (root / "dokumente").glob("*.md")]
    sections = sum(p.read_text(encoding="utf-8").count("\n## ") for p in (root / "dokumente").glob("*.md"))
    print(f"{len(sizes)} entries, {sections} sections, {sum(sizes) / 1e6:.1f} MB, "
          f"median {statistics.median(sizes) / 1000:.1f} KB, largest {max(sizes) / 1000:.1f} KB, "
          f"{elapsed:.2f} s -> {root}")
    return 0
