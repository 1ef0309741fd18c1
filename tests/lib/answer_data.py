"""Blocks and a conflict shared by the answer engine's tests (tests/lib/test_answer_*.py)."""
from lib.answer.types import Conflict, ContextBlock

ATZ_TITLE = "Altersteilzeit – Ersatzquote des AMS"
ATZ_TABLE = (
    "| Wert | Regel |\n"
    "|---|---|\n"
    "| Ersatzquote AMS | 28,5 % |\n"
    "| Antragsfrist | 6 Wochen |\n"
    "| Höchstbetrag Zuschuss | € 551,10 |"
)


def block(entry_id, text, *, title=ATZ_TITLE, stand="2026-01", section="kernwerte",
          heading=None, score=1.0, topic="altersteilzeit", expansion=False):
    return ContextBlock(
        entry_id=entry_id, title=title, stand=stand, topic=topic,
        source="Lexis Briefings Personalrecht",
        heading_path=heading or f"{title} > {section.capitalize()}",
        text=text, section_key=section, score=score, expansion=expansion,
    )


ATZ_CONFLICT = Conflict("Ersatzquote AMS", ["lb-atz-07", "lb-atz-09"],
                        {"lb-atz-07": "28,5 %", "lb-atz-09": "27,5 %"},
                        {"lb-atz-07": "2026-01", "lb-atz-09": "2025-01"})


def codes(validation):
    return [v.code for v in validation.violations]


def sample_blocks():
    """An ATZ Kernwerte table, an ATZ summary with another rate, and an unrelated Urlaub entry."""
    return [
        block("lb-atz-07", ATZ_TABLE, heading=f"{ATZ_TITLE} > Kernwerte & Fristen", score=0.9),
        block("lb-atz-09", "Das AMS ersetzt 27,5 % der Aufwendungen des Arbeitgebers.",
              title="Altersteilzeit – Altersteilzeitgeld", stand="2025-01", section="zusammenfassung",
              score=0.6),
        block("lb-url-01", "Der Urlaub beträgt 30 Werktage je Arbeitsjahr.", title="Urlaubsausmaß",
              stand="2025-01", section="zusammenfassung", topic="urlaub", score=0.4),
    ]
