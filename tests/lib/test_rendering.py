from lib.kb.rendering import entry_html


def test_entry_html_drops_the_title_and_styles_tables():
    html = entry_html("# Titel\n\n## Kernwerte & Fristen\n| Wert | Betrag |\n|---|---|\n| Freibetrag | € 620 |\n")
    assert "Titel" not in html
    assert "<h2>Kernwerte &amp; Fristen</h2>" in html
    assert '<table class="table table-sm table-bordered w-auto">' in html
    assert "<td>€ 620</td>" in html
