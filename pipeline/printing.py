"""Output for people: a JSON Lines record of canonical texts (full IRIs, class memberships as
``rdf:type`` triples, graphs as N-Triples documents) in the readable form that ``dotr run``
writes by default: IRIs with the rule file's prefixes, ``:C(:x)`` for a class membership, each
graph a list of ``[s, p, o]`` terms, numbers as numerals. Every readable fact reads back, with the
rule file's prefixes, as the fact it stands for (``docs/cli.md``, "Output").

>>> r = Readable({"": "http://ex.org/"})
>>> r.fact("<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>(<http://ex.org/x8>,<http://ex.org/Alarm>)")
':Alarm(:x8)'
>>> r.fact('<http://ex.org/at>(<http://ex.org/s1>,"5"^^<http://www.w3.org/2001/XMLSchema#gYear>)')
':at(:s1,"5"^^xsd:gYear)'
>>> r.fact("alarm(<http://other.org/a>,25)")
'alarm(<http://other.org/a>,25)'
>>> r.graph('<http://ex.org/f> <http://ex.org/temp> "52"^^<http://www.w3.org/2001/XMLSchema#integer> .\\n')
[[':f', ':temp', '52']]
"""

from __future__ import annotations

import json
import re

from dotr.rules.lang.ir import RDF_TYPE, XSD

from .fact_texts import edit, edits

#: the prefixes every rule file has
PREDECLARED = {"rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
               "xsd": XSD, "owl": "http://www.w3.org/2002/07/owl#"}

_LOCAL = re.compile(r"(?:[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?)?")  # as the rule grammar reads it
_TERM = re.compile(r'<[^>]*>|_:[^\s,()]+|"(?:[^"\\]|\\.)*"(?:@[A-Za-z0-9\-]+|\^\^<[^>]*>)?|[^\s,()]+')
_FACT = re.compile(r"([^(]+?)(?:\((.*)\))?")
_TYPE = f"<{RDF_TYPE}>"
#: a string's JSON, as ``json.dumps(text, ensure_ascii=False)`` writes it
_json_string = json.encoder.encode_basestring
_NUMERALS = {f"<{XSD}integer>": re.compile(r"[+-]?\d+"), f"<{XSD}decimal>": re.compile(r"[+-]?\d*\.\d+")}


def _as_written(fact: str) -> bool:
    """Whether a canonical fact text is its readable form: one of names and numbers only (no IRI,
    no literal)."""
    return "<" not in fact and '"' not in fact


class Readable:
    """Turns canonical texts into readable ones with ``prefixes`` (the rule file's; rdf, rdfs,
    xsd and owl are always there). The texts of one record are remembered for the next, so a
    fact that holds on is converted once."""

    def __init__(self, prefixes: dict[str, str]):
        namespaces = {**PREDECLARED, **prefixes}
        self._namespaces = sorted(((ns, name) for name, ns in namespaces.items() if ns),
                                  key=lambda item: -len(item[0]))
        # (the longest namespace an IRI starts with, in one match: alternatives are tried in order)
        self._namespace = re.compile("|".join(re.escape(ns) for ns, _ in self._namespaces) or "(?!)")
        self._iris: dict[str, str] = {}
        self._facts: dict[str, str] = {}
        self._last: dict[str, str] = {}
        self._tails: dict[str, tuple[str, str]] = {}  # an N-Triples line's "P O ." -> readable (P, O)
        self._json_tails: dict[str, str] = {}  # the same -> the JSON of its end: ', "P", "O"]'

    def record(self, record: dict) -> dict:
        """A record of :meth:`pipeline.records.Result.to_json`, readable."""
        self._last, self._facts = self._facts, {}
        out, fact = dict(record), self.fact
        for key in ("facts", "removed"):
            if key in record:  # (a fact of names and numbers reads as it is written)
                out[key] = [f if _as_written(f) else fact(f) for f in record[key]]
        if "at" in record:
            out["at"] = {when: [self.fact(f) for f in facts] for when, facts in record["at"].items()}
        if "graphs" in record:
            out["graphs"] = [self.graph(doc) for doc in record["graphs"]]
        if "answers" in record:  # (an ASK query's answer is true or false)
            out["answers"] = {name: rows if isinstance(rows, bool) else
                              [{var: self.term(value) for var, value in row.items()} for row in rows]
                              for name, rows in record["answers"].items()}
        if "events" in record:
            out["events"] = [{**event, "attributes": {a: self.term(v) for a, v in event["attributes"].items()}}
                             for event in record["events"]]
        return out

    def fact(self, text: str) -> str:
        readable = self._facts.get(text)
        if readable is None:
            readable = self._last.get(text)
            if readable is None:
                readable = self._fact(text)
            self._facts[text] = readable
        return readable

    def _fact(self, text: str) -> str:
        pred, args = _FACT.fullmatch(text).groups()
        if args is None:
            return self.term(pred)
        terms = [self.term(a) for a in _TERM.findall(args)]
        if pred == _TYPE and len(terms) == 2 and not terms[1].startswith(('"', "_:")):
            return f"{terms[1]}({terms[0]})"  # a class membership, as written
        return f"{self.term(pred)}({','.join(terms)})"

    def term(self, text: str) -> str:
        """A canonical or N-Triples term, readable."""
        if text.startswith("<"):
            return self.iri(text[1:-1])
        if text.startswith('"') and text.endswith(">") and '"^^<' in text:
            lexical, datatype = text.rsplit("^^", 1)
            numeral = _NUMERALS.get(datatype)
            if numeral is not None and numeral.fullmatch(lexical[1:-1]):
                return lexical[1:-1]
            return f"{lexical}^^{self.iri(datatype[1:-1])}"
        return text

    def iri(self, iri: str) -> str:
        shown = self._iris.get(iri)
        if shown is None:
            if not self._namespace.match(iri):  # (not kept: a match's fresh IRIs would crowd out the rest)
                return f"<{iri}>"
            shown = f"<{iri}>"
            for ns, name in self._namespaces:
                if iri.startswith(ns) and _LOCAL.fullmatch(iri[len(ns):]):
                    shown = f"{name}:{iri[len(ns):]}"
                    break
            if len(self._iris) > 100_000:  # (terms of a long stream: keep the memory bounded)
                self._iris.clear()
            self._iris[iri] = shown
        return shown

    def graph(self, ntriples: str) -> list[list[str]]:
        """An N-Triples document as its triples, each ``[s, p, o]`` readable.

        >>> Readable({"ex": "http://ex.org/"}).graph('_:b1 <http://ex.org/p> "a b" .\\n<http://ex.org/s>  <http://ex.org/p> <http://ex.org/o> .')
        [['_:b1', 'ex:p', '"a b"'], ['ex:s', 'ex:p', 'ex:o']]
        """
        term, tails, out = self.term, self._tails, []
        last = shown = None  # (the lines of a match's graph share their subject)
        for line in ntriples.split("\n"):
            # (a line as dotr writes it: "S P O .", one space apart; the readable P and O are
            # kept, since graphs repeat them with fresh subjects)
            subject, _, tail = line.partition(" ")
            po = tails.get(tail)
            if po is None:
                p, _, o = tail.partition(" ")
                if not _as_dotr_writes(subject, p, o):
                    if line.strip():
                        out.append([term(t) for t in _TERM.findall(line)[:3]])
                    continue
                if len(tails) > 100_000:
                    tails.clear()
                po = tails[tail] = (term(p), term(o[:-2]))
            if subject != last:
                last, shown = subject, subject if subject[0] == "_" else term(subject)
            out.append([shown, *po])
        return out

    def graph_json(self, ntriples: str) -> str:
        """``json.dumps(self.graph(ntriples), ensure_ascii=False)``, made from the JSON of each
        line's readable predicate and object, kept (a match's graph repeats them with fresh
        subjects), and of its subject: no lists built and encoded at every graph.

        >>> r = Readable({"ex": "http://ex.org/"})
        >>> doc = '<urn:m:1> <http://ex.org/p> "a b" .\\n<urn:m:1> <http://ex.org/q> <http://ex.org/é> .\\n'
        >>> print(r.graph_json(doc))
        [["<urn:m:1>", "ex:p", "\\"a b\\""], ["<urn:m:1>", "ex:q", "<http://ex.org/é>"]]
        >>> r.graph_json(doc) == json.dumps(r.graph(doc), ensure_ascii=False)
        True
        """
        tails, term, out = self._json_tails, self.term, []
        last = shown = None
        for line in (ntriples[:-1] if ntriples.endswith("\n") else ntriples).split("\n"):  # (no last, empty line)
            subject, _, tail = line.partition(" ")
            end = tails.get(tail)
            if end is None:
                p, _, o = tail.partition(" ")
                if not _as_dotr_writes(subject, p, o):
                    if not line:
                        continue
                    return json.dumps(self.graph(ntriples), ensure_ascii=False)  # (a line written otherwise)
                if len(tails) > 100_000:
                    tails.clear()
                end = tails[tail] = f", {_json_string(term(p))}, {_json_string(term(o[:-2]))}]"
            if subject != last:
                last = subject
                shown = "[" + _json_string(subject if subject[0] == "_" else term(subject))
            out.append(shown + end)
        return "[" + ", ".join(out) + "]"


def _as_dotr_writes(subject: str, p: str, o: str) -> bool:
    """Whether an N-Triples line, split at its first two spaces, is one as dotr writes it:
    ``S P O .``, one space apart."""
    return subject[:1] in ("<", "_") and p[:1] == "<" and p[-1:] == ">" and o.endswith(" .")


class EncodedFacts:
    """Printed facts as the JSON strings a record lists them as (readable with ``readable``, else
    canonical), each encoded once. The last array written is kept, its texts and their strings
    side by side, and changed by what came and went (``Result.changes``), so that a fact that
    holds on costs its share of one join, not a format, a lookup and an encoding at every time
    point.

    >>> facts = EncodedFacts(Readable({"": "http://ex.org/"}))
    >>> facts.array(["<http://ex.org/hot>(<http://ex.org/r1>)", "a(1)"])
    '[":hot(:r1)", "a(1)"]'
    >>> facts.array(["<http://ex.org/hot>(<http://ex.org/r1>)", "a(2)"], (["a(2)"], ["a(1)"], 2))
    '[":hot(:r1)", "a(2)"]'
    """

    def __init__(self, readable: Readable | None):
        self._fact = readable.fact if readable is not None else str
        self._texts: list[str] = []  # the texts of the last array, and their JSON strings
        self._encoded: list[str] = []

    def _encode(self, text: str) -> str:
        return _json_string(text if _as_written(text) else self._fact(text))

    def array(self, texts: list[str], changes: tuple[list[str], list[str], int] | None = None) -> str:
        """The JSON array of ``texts``; ``changes``: how they differ from the texts of the last
        array, as ``(added, removed, how many there were)`` (None: not known)."""
        last = self._texts
        if changes is not None and changes[2] == len(last):
            where = edits(last, changes[1], changes[0])
            self._texts, self._encoded = edit(last, where), edit(self._encoded, where, self._encode)
        if self._texts != texts:  # (the changes were not known: a list compare is a pass in C)
            self._texts, self._encoded = list(texts), [self._encode(text) for text in texts]
        return "[" + ", ".join(self._encoded) + "]"
