"""The Spark job's split step without Spark: a file's records with their lines and times, as
spans read back by the enrich step, and bad records rejected with their line."""

import json
import pickle

from hypothesis import given, settings, strategies as st

from dotr.pipeline.spark.elements import read_spans, split_file, time_of


def test_spans_read_back_give_the_records_and_their_lines(tmp_path):
    lines = ['{"t": 1, "facts": ["p(a)"]}', "", '  {"facts": ["q(\\"é\\")"], "t": 2}', "not json", '{"t": 3, "facts": []}']
    path = tmp_path / "a b%20.jsonl"
    path.write_bytes("\r\n".join(lines).encode())
    source = f"file:{path}"
    spans = list(split_file(source, "auto"))
    assert [(line, t, fmt) for _, line, t, fmt, _ in spans] == [(1, 1, "span"), (3, 2, "span"), (4, None, "error"),
                                                               (5, 3, "span")]
    read = list(read_spans(spans))
    assert [payload.decode().strip() for *_, fmt, payload in read if fmt == "jsonl"] == [lines[0], lines[2].strip(),
                                                                                         lines[4]]
    assert json.loads(read[2][4])["record"] == "not json"
    given_content = list(split_file(source, "auto", path.read_bytes()))  # the file as Spark read it
    assert [row[:3] for row in given_content] == [row[:3] for row in read]
    assert [row[4].strip() for row in given_content] == [row[4].strip() for row in read]


def test_an_empty_file_or_blank_lines_give_no_records(tmp_path):
    for text in (b"", b"\n \r\n\t\n"):
        path = tmp_path / "e.jsonl"
        path.write_bytes(text)
        assert list(split_file(f"file:{path}", "jsonl")) == list(split_file("e.jsonl", "jsonl", text)) == []


def test_a_file_gone_before_the_enrich_step_rejects_its_records(tmp_path):
    path = tmp_path / "gone.jsonl"
    path.write_text('{"t": 1, "facts": []}\n')
    spans = list(split_file(f"file:{path}", "jsonl"))
    path.unlink()
    (source, line, t, fmt, payload), = read_spans(spans)
    assert (line, t, fmt) == (1, 1, "error") and "cannot read the file" in json.loads(payload)["reason"]
    assert [row[3] for row in split_file(f"file:{path}", "jsonl")] == ["error"]


def test_other_formats_are_parsed_in_the_split_step(tmp_path):
    path = tmp_path / "s.txt"
    path.write_text("1 3\n1 : p(2), q(1)\n3 : \n")
    rows = list(split_file(f"file:{path}", "auto"))
    assert [(line, t, fmt) for _, line, t, fmt, _ in rows] == [(2, 1, "pickle"), (3, 3, "pickle")]
    assert [len(pickle.loads(row[4])[1]) for row in rows] == [2, 0]  # (stream, facts)


values = st.one_of(st.integers(-2 ** 70, 2 ** 70), st.booleans(), st.none(), st.floats(allow_nan=False),
                   st.text(max_size=3), st.lists(st.integers(), max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["t", "facts", "x"]), values), st.sampled_from(["", " ", "\t"]),
       st.booleans())
def test_time_of_a_record_is_what_json_reads(record, space, compact):
    """The opening read by a regular expression agrees with the JSON parser (an integer "t" that
    fits 64 bits, else None)."""
    text = space + json.dumps(record, separators=(",", ":") if compact else None)
    t = record.get("t")
    expected = t if type(t) is int and -2 ** 63 <= t < 2 ** 63 else None
    assert time_of(text) == time_of(text.encode()) == expected


def test_a_record_giving_its_time_twice_is_rejected(tmp_path):
    from dotr.ontology import OntologicalStage
    from dotr.pipeline.spark.job import _Worker, enrich_rows
    from dotr.rules import check

    checked = check("examples/cooling/rules.dotr")
    bundle = pickle.dumps((checked, OntologicalStage(checked, []).snapshot(), {},
                           {"keep_empty": False, "keys": None, "groups": [0]}))
    path = tmp_path / "s.jsonl"
    path.write_text('{"t": 1, "facts": ["temp(20)"]}\n{"t": 2, "t": 5, "facts": ["temp(30)"]}\n')
    rows = enrich_rows(_Worker(bundle), split_file(f"file:{path}", "jsonl"))
    assert sorted((kind, t) for t, _, kind, _ in rows if kind != "records") == [("point", 1), ("reject", 2)]
    reject, = (json.loads(payload) for _, _, kind, payload in rows if kind == "reject")
    assert reject["reason"] == 'a record has one "t"' and reject["line"] == 2
