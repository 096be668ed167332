"""The structure layer (issue 42): each format read by its parser into spans with roles, and the
answer a person reads in it. Cases are the shapes of real frontier answers of held-out rounds 5
and 6 (fixtures/answers/frontier/answers/answer-heldout5-*.jsonl, ...-heldout6-*), cut short.

Each rule was broken once to see its test fail (the mutation is named in the test's docstring).
"""

from __future__ import annotations

import pytest

from pytest_citebench.parsing.structure import answer_reading, read_reply


def reading(raw: str, want: str = "title") -> str | None:
    found = answer_reading(raw, want, ("authors",) if want == "authors" else ("title",))
    return None if found is None else found.text


def test_plain_text_has_no_structure() -> None:
    """Mutation: read_reply returns a markdown structure for any text -> fails."""
    assert read_reply("Deep Residual Learning for Image Recognition") is None
    prose = "SMOTE: Synthetic Minority Over-sampling Technique\nIt balances classes.\nIt is old."
    assert read_reply(prose) is None


def test_markdown_card_reads_the_field_under_the_asked_label() -> None:
    """A heading and labelled fields: the heading and the labels are no answer. Mutation: bold
    leads not read as labels (``_BOLD_LABEL`` never matches) -> fails."""
    card = (
        "### Cited Paper\n\n**Title:** Newsroom: A Dataset of 1.3 Million Summaries\n"
        "**Authors:** Max Grusky, Mor Naaman, Yoav Artzi\n**Venue:** NAACL 2018\n\n"
        "**Follow-up:** Want the BibTeX entry?"
    )
    assert reading(card) == "Newsroom: A Dataset of 1.3 Million Summaries"
    assert reading(card, "authors") == "Max Grusky, Mor Naaman, Yoav Artzi"
    roles = {s.text: s.role for s in read_reply(card).spans}  # type: ignore[union-attr]
    assert roles["Cited Paper"] == "heading"
    assert roles["Title"] == "label"


def test_a_table_header_row_is_a_label_and_its_cells_are_read() -> None:
    """Mutation: header cells given the role "cell" -> the header is read as the title."""
    table = "| Cited paper title |\n|---|\n| Dynamic Graph Convolutional Networks |"
    assert reading(table) == "Dynamic Graph Convolutional Networks"
    assert reading("| Result |\n|---|\n| Dynamic Graph Networks |") == "Dynamic Graph Networks"
    people = "| Author | Affiliation |\n|---|---|\n| Ada Lovelace | X |\n| Alan Turing | Y |"
    assert reading(people, "authors") == "Ada Lovelace, Alan Turing"


def test_html_fragment_read_as_its_text() -> None:
    """Mutation: ``_html_as_markdown`` returns None -> the tags stay in the reading."""
    assert reading("<p>Chunting Zhou, Chonglin Sun, Zhiyuan Liu</p>", "authors") == (
        "Chunting Zhou, Chonglin Sun, Zhiyuan Liu"
    )
    html = "<ul><li><strong>Title:</strong> Semantic Product Search</li></ul>"
    assert reading(html) == "Semantic Product Search"
    assert read_reply(html).kind == "html"  # type: ignore[union-attr]


def test_latex_bibitem_blocks_are_people_then_title() -> None:
    """``\\newblock`` separates the people, the title and the venue; the key is no answer.
    Mutation: ``_bibitem_fields`` keeps the entry whole -> the title reading holds the people."""
    tex = (
        "\\begin{thebibliography}{1}\n\\bibitem{kipf2017gcn}\nT.~N. Kipf and M.~Welling.\n"
        "\\newblock Semi-Supervised Classification with Graph Convolutional Networks.\n"
        "\\newblock In \\emph{ICLR}, 2017.\n\\end{thebibliography}"
    )
    assert reading(tex) == "Semi-Supervised Classification with Graph Convolutional Networks"
    assert reading(tex, "authors") == "T. N. Kipf and M. Welling"


def test_ris_record_codes_are_labels() -> None:
    """Mutation: RIS tags not mapped (``_RIS_ROLES`` empty) -> 'TY - CONF' is the first line."""
    ris = (
        "TY  - CONF\nTI  - Dream to Control: Learning Behaviors by Latent Imagination\n"
        "AU  - Hafner, Danijar\nAU  - Lillicrap, Timothy\nPY  - 2020\nER  - "
    )
    assert reading(ris) == "Dream to Control: Learning Behaviors by Latent Imagination"
    assert reading(ris, "authors") == "Danijar Hafner, Timothy Lillicrap"


@pytest.mark.parametrize(
    ("raw", "want", "expected"),
    [
        (
            'authors: "Daniel Zügner, Stephan Günnemann"',
            "authors",
            "Daniel Zügner, Stephan Günnemann",
        ),
        ('cited_title = "Quantum supremacy"\nconfidence = 0.8', "title", "Quantum supremacy"),
        (
            '{"name": "submit_citation", "arguments": {"title": "Attention Is All You Need"}}',
            "title",
            "Attention Is All You Need",
        ),
        (
            '[{"title": "X Y Z", "author": [{"family": "Vaswani", "given": "Ashish"}]}]',
            "authors",
            "Ashish Vaswani",
        ),
        (
            "<citation><paper><title>Graph Attention Networks</title></paper></citation>",
            "title",
            "Graph Attention Networks",
        ),
        (
            '```python\n# the likely cited paper\ncited_title = "Graph Attention Networks"\n```',
            "title",
            "Graph Attention Networks",
        ),
    ],
)
def test_documents_read_by_their_parser(raw: str, want: str, expected: str) -> None:
    """YAML, TOML, JSON (a function call, CSL-JSON), XML, Python: the value under the key that
    names what was asked. Mutation: ``_wanted_key`` always False -> the first value is read."""
    assert reading(raw, want) == expected


def test_one_line_title_with_a_colon_is_no_yaml() -> None:
    """Mutation: ``_PROGRAM_KEY`` check removed -> 'SMOTE' is read as a key."""
    structure = read_reply("SMOTE: Synthetic Minority Over-sampling Technique")
    assert structure is None or structure.kind != "yaml"


def test_letter_frame_and_chat_address_come_off() -> None:
    """Mutations: ``_is_greeting`` False -> 'Hello,' is read; ``_ADDRESS`` never matches ->
    'Hi!' is read."""
    letter = (
        "Dear Dr. Smith,\n\nThank you for your question. The authors are:\n\n"
        "Lele Chen, Zhiyao Duan, Chenliang Xu\n\nBest regards,\nResearch Assistant"
    )
    assert reading(letter, "authors") == "Lele Chen, Zhiyao Duan, Chenliang Xu"
    assert reading("Hi! :wave: pass") == "pass"
    assert reading("@asker :thinking_face: pass") == "pass"


def test_a_list_of_names_is_no_signature() -> None:
    """A trailing list of people is the answer, not a signature block ('- Dr. Elena ...').
    Mutation: a single '-' accepted as a signature dash -> the list is dropped."""
    raw = "The authors are:\n\n- Dr. Elena Martinez\n- Dr. Omar Khan"
    assert reading(raw, "authors") == "Dr. Elena Martinez\nDr. Omar Khan"


def test_a_restated_question_and_a_lead_in_are_no_answer() -> None:
    """Mutations: questions kept; lead-ins ending in ':' kept -> they come first."""
    faq = "**Q:** Which paper is cited here?\n\n**A:** Active Dual Supervision"
    assert reading(faq) == "Active Dual Supervision"
    slack = "my best guess for the cited paper:\n> *Our Data, Ourselves*"
    assert reading(slack) == "Our Data, Ourselves"


@pytest.mark.parametrize(
    "raw",
    [
        "Συγγραφείς: Kuan Wang, Zhijian Liu, Song Han",
        "Författare: Daniel Fried, Ronghang Hu, Dan Klein",
        "Auteurs (je n'en suis pas sûr) : Daniel Fried, Ronghang Hu, Dan Klein",
    ],
)
def test_a_label_is_read_by_where_it_stands_in_any_language(raw: str) -> None:
    """No word list: a label in another script than its value, or one word before a list of
    people, or a short label with a hedge in brackets. Mutation: ``_one_label`` False and the
    short-label case removed -> None."""
    found = reading(raw, "authors")
    assert found is not None
    assert ":" not in found


def test_a_placed_reading_says_so() -> None:
    """Markdown prose lines are not placed; a field, a cell or a document is. Mutation: placed
    always True -> a base model's numbered steps could be judged a wrong title."""
    steps = "The algorithm works as follows:\n\n1. Create a graph.\n2. Compute the distances."
    assert answer_reading(steps, "title").placed is False  # type: ignore[union-attr]
    assert answer_reading("**Title:** X Y", "title").placed is True  # type: ignore[union-attr]
    assert answer_reading("<p>X Y</p>", "title").placed is True  # type: ignore[union-attr]


def test_search_results_lose_their_urls() -> None:
    """Mutation: URL lines not a structure signal -> the URL is glued to the title."""
    raw = (
        "Pixel-Adaptive Convolutional Neural Networks\nhttps://arxiv.org/abs/1904.05373\n"
        "Su et al. (CVPR 2019): content-adaptive convolution."
    )
    assert reading(raw).splitlines()[0] == "Pixel-Adaptive Convolutional Neural Networks"  # type: ignore[union-attr]
    assert "https://" not in reading(raw)  # type: ignore[operator]


def test_a_json_reply_of_numbers_is_no_document() -> None:
    """'[3]' cites a retrieved paper by its number (``ranks``). Mutation: a document with no
    text value accepted -> read_reply returns a json structure."""
    assert read_reply("[3]") is None


def test_a_label_in_another_script_is_one_even_before_prose() -> None:
    """Three lines or more: only a label that is one by how it is written stands. Mutation:
    ``_one_label`` always False -> no structure."""
    raw = "Συγγραφείς: Kuan Wang, Zhijian Liu\nΕλπίζω να βοηθήσει.\nΚαλή συνέχεια."
    assert reading(raw, "authors") is not None
    assert reading(raw, "authors").startswith("Kuan Wang")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("raw", "want", "expected"),
    [
        (
            "INSERT INTO citations (authors) VALUES ('Sai Praneeth Karimireddy, Lie He');",
            "authors",
            "Sai Praneeth Karimireddy, Lie He",
        ),
        (
            'source_paper="A Big Data Framework" cited_title="ViTGAN: Training GANs"',
            "title",
            "ViTGAN: Training GANs",
        ),
        ("source_paper=\"A Big Data Framework\" cited_title=pass", "title", "pass"),
        (
            '@prefix foaf: <http://xmlns.com/foaf/0.1/> .\nex:NiekTax foaf:name "Niek Tax" .\n'
            'ex:WilVanDerAalst foaf:name "Wil van der Aalst" .',
            "authors",
            "Niek Tax, Wil van der Aalst",
        ),
        (
            "{{cite journal |last1=Ren |first1=Pengjie |last2=de Rijke |first2=Maarten "
            "|title=Wizard of Search Engine |year=2021}}",
            "authors",
            "Pengjie Ren, Maarten de Rijke",
        ),
        ("cited_title\nDeep Residual Learning for Image Recognition", "title",
         "Deep Residual Learning for Image Recognition"),
        ("1/ Yifan Peng, Shankai Yan, Zhiyong Lu\n\n2/ #BioNLP #BERT", "authors",
         "Yifan Peng, Shankai Yan, Zhiyong Lu"),
        (
            "1. Wang Z, Xie Q, Xia R. Is ChatGPT a good sentiment analyzer? A preliminary study. "
            "arXiv [Preprint]. 2023.",
            "title",
            "Is ChatGPT a good sentiment analyzer? A preliminary study",
        ),
    ],
)  # fmt: skip
def test_what_programs_write_is_read_by_its_grammar(raw: str, want: str, expected: str) -> None:
    """SQL, logfmt, Turtle, a wiki template, CSV, a microblog thread, a Vancouver reference.
    Mutations: ``code`` returns None; ``_unthreaded`` returns its text; ``_reference`` None."""
    assert reading(raw, want) == expected


def test_prose_that_starts_with_names_is_no_reference() -> None:
    """A reference has a year after its title. Mutation: the year check removed -> 'Mason A'
    read as a Vancouver author and the rest of the names as the title."""
    raw = (
        "Mason A. Porter, Jukka-Pekka Onnela, and Peter J. Mucha are the authors of the research "
        'paper titled "Invertible generalized synchronization".'
    )
    structure = read_reply(raw)
    assert structure is None or structure.kind != "reference"


@pytest.mark.parametrize(
    ("raw", "want", "expected"),
    [
        ('answer "cited_paper" { value = "Keep it SMPL" }', "title", "Keep it SMPL"),
        ('answer "authors" { value = "pass" }', "authors", "pass"),
        ("[answer]\ntitle = Speed/accuracy trade-offs", "title", "Speed/accuracy trade-offs"),
        ('const citedTitle = "Detection of Novel Social Bots";', "title",
         "Detection of Novel Social Bots"),
        ('(:authors ["Lingjiao Chen" "Arun Kumar"])', "authors", "Lingjiao Chen, Arun Kumar"),
        ('authors: "Sandy Huang"\nauthors: "Nicolas Papernot"', "authors",
         "Sandy Huang, Nicolas Papernot"),
        (".TH CITATION 1\n.SH NAME\ncitation \\- cited paper\n.SH DESCRIPTION\nSegment Anything",
         "title", "Segment Anything"),
        ("h2. Cited paper\n*Type:* Task\n||Field||Value||\n|Answer|SPoC: Search-based Pseudocode|",
         "title", "SPoC: Search-based Pseudocode"),
    ],
)  # fmt: skip
def test_any_programs_assignments_and_other_markups(raw: str, want: str, expected: str) -> None:
    """Round 8's shapes, read by where their keys stand: HCL, INI, JavaScript, EDN, protobuf text
    (a key given twice is no YAML), a man page (its NAME section is the page's name), Jira wiki
    markup (a table of fields). Mutations: ``assignments`` returns None; the block-label rule
    removed; the duplicate-key check removed; the NAME section kept; ``_row_fields`` a no-op."""
    assert reading(raw, want) == expected


def test_prose_with_a_colon_is_no_program() -> None:
    """Assignments must be most of the reply. Mutation: the coverage check removed."""
    raw = "I think the answer: it is probably the paper on residual networks, by He et al."
    structure = read_reply(raw)
    assert structure is None or structure.kind != "assignments"
