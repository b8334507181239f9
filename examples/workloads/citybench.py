"""CityBench's continuous queries and inputs (Ali et al., ISWC 2015), written the way the benchmark
writes them.

CityBench replays the city of Aarhus's sensor streams (traffic, weather, parking, pollution) as
RDF: each CSV row becomes one ``ssn:Observation`` per property its sensor observes
(``ssn:observedBy`` the sensor, ``ssn:observedProperty`` the property, ``sao:hasValue`` an
``xsd:double``), one row per second per stream. Its C-SPARQL queries (:func:`queries`) join the
streams with the sensor repository, and write the type patterns outside the groups that use
their variables, with ``#`` comments, ASK, and a FROM clause naming the repository
(``<repository>``, a file beside the rules); each that writes type patterns apart also comes
reshaped (the type patterns moved into the groups), which gives the same answers.

Inputs: a generated repository (:func:`generated_repository`) and rows (:func:`generated_rows`)
shaped like the Aarhus ones, or CityBench's own sample (:func:`real_properties`,
:func:`real_rows`); :func:`write_stream` writes the observations as JSON Lines.

>>> import random, tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> properties = generated_repository(folder / "repository.nt", 5, random.Random(1))
>>> spec = queries()["Q1"]
>>> write_stream(folder / "s.jsonl", spec["streams"], properties, 3, lambda s: generated_rows(s, 3, random.Random(2)))
120
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Iterator

SES = "http://www.insight-centre.org/dataset/SampleEventService#"
CT = "http://www.insight-centre.org/citytraffic#"
SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
SAO = "http://purl.oclc.org/NET/sao/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
DOUBLE = "http://www.w3.org/2001/XMLSchema#double"

TRAFFIC = ("AvgSpeed", "VehicleCount", "MeasuredTime", "EstimatedTime", "CongestionLevel")
#: the streams the queries read: service -> the types of the properties it observes
STREAMS = {
    "AarhusTrafficData182955": TRAFFIC, "AarhusTrafficData158505": TRAFFIC, "AarhusTrafficData186979": TRAFFIC,
    "AarhusWeatherData0": ("Temperature", "Humidity", "WindSpeed"),
    "AarhusParkingDataKALKVAERKSVEJ": ("ParkingVacancy",), "AarhusParkingDataSKOLEBAKKEN": ("ParkingVacancy",),
    "AarhusPollutionData201399": ("API",), "AarhusPollutionData184892": ("API",),
}


# ------------------------------------------------------------------------------------ queries

def _obs(var: str, prop: str, value: str, service: str, typed: str = "") -> str:
    """An observation group as CityBench writes it (``typed``: the type pattern moved in)."""
    return (f"{{{typed}?{var} a ?ob.\n?{var} <{SSN}observedProperty> ?{prop}.\n?{var} <{SAO}hasValue> ?{value}.\n"
            f"?{var} <{SSN}observedBy> <{SES}{service}>.\n}}")


def _type(var: str, kind: str) -> str:
    return f"?{var}   a <{CT}{kind}>.\n"


def _two_streams(name: str, kind: str, a: str, b: str, extra: str = "", select: str = "?obId1 ?obId2 ?v1 ?v2",
                 apart: bool = True) -> str:
    """Two observations of two streams whose properties have type ``kind``: the type patterns
    outside the groups (``apart``, as CityBench writes Q1 and Q7) or inside them."""
    types = _type("p1", kind) + _type("p2", kind) if apart else ""
    g1 = _obs("obId1", "p1", "v1", a, "" if apart else _type("p1", kind))
    g2 = _obs("obId2", "p2", "v2", b, "" if apart else _type("p2", kind))
    return (f"REGISTER QUERY {name} AS\nselect {select}\n"
            f" from stream <{SES}{a}> [range 3000ms step 1s]\n from stream <{SES}{b}> [range 3000ms step 1s]\n"
            f" FROM <repository>\nwhere {{\n{types}\n{g1}\n\n{g2}\n{extra}}}")


def queries() -> dict[str, dict]:
    """name -> the streams it reads, its text as CityBench writes it, and the reshaped text (or
    None when the query writes no pattern apart from the groups that use its variables)."""
    traffic1, traffic2, traffic3 = "AarhusTrafficData182955", "AarhusTrafficData158505", "AarhusTrafficData186979"
    park1, park2 = "AarhusParkingDataKALKVAERKSVEJ", "AarhusParkingDataSKOLEBAKKEN"
    poll1, poll2 = "AarhusPollutionData201399", "AarhusPollutionData184892"
    weather = "AarhusWeatherData0"
    out: dict[str, dict] = {}
    # Q1: congestion of two roads
    out["Q1"] = dict(streams=[traffic1, traffic2], written=_two_streams("Q1", "CongestionLevel", traffic1, traffic2),
                     reshaped=_two_streams("Q1", "CongestionLevel", traffic1, traffic2, apart=False))
    # Q2: the weather with a road's congestion (the type patterns commented out, as CityBench has
    # them: the service tells the properties apart)
    weather_groups = "\n".join(_obs(f"obId{i}", f"p{i}", f"v{i}", weather) for i in (1, 2, 3))
    out["Q2"] = dict(streams=[weather, traffic2], reshaped=None, written=(
        f"REGISTER QUERY Q2 AS\nselect ?obId1 ?obId2 ?obId3 ?obId4 ?v1 ?v2 ?v3 ?v4\n FROM <repository>\n"
        f" FROM stream <{SES}{weather}> [range 3s step 1s]\n FROM stream <{SES}{traffic2}> [range 3000ms step 1s]\n"
        f"where {{\n#?p1   a <{CT}Temperature>.\n#?p4   a <{CT}CongestionLevel>.\n\n"
        f"{weather_groups}\n{_obs('obId4', 'p4', 'v4', traffic2)}}}"))
    # Q3: the average congestion of two roads, each type pattern a group of its own
    def q3(apart: bool) -> str:
        types = (f"{{{_type('p1', 'CongestionLevel')}}}\n{{{_type('p3', 'CongestionLevel')}}}\n" if apart else "")
        return (f"REGISTER QUERY Q3 AS\nselect ?obId1 ?obId3 ?v1 ?v3 (((?v1+?v3)/2) as ?avgCongest)\n"
                f" FROM <repository>\n from stream <{SES}{traffic1}> [range 3s step 1s]\n"
                f" from stream <{SES}{traffic2}> [range 3s step 1s]\nwhere {{\n### the average of the two levels\n"
                f"{types}{_obs('obId1', 'p1', 'v1', traffic1, '' if apart else _type('p1', 'CongestionLevel'))}\n"
                f"{_obs('obId3', 'p3', 'v3', traffic2, '' if apart else _type('p3', 'CongestionLevel'))}\n}}")
    out["Q3"] = dict(streams=[traffic1, traffic2], written=q3(True), reshaped=q3(False))
    # Q7: two car parks, one of them nearly full
    out["Q7"] = dict(streams=[park1, park2],
                     written=_two_streams("Q7", "ParkingVacancy", park1, park2, "Filter(?v1 < 1 || ?v2 < 1 )\n"),
                     reshaped=_two_streams("Q7", "ParkingVacancy", park1, park2, "Filter(?v1 < 1 || ?v2 < 1 )\n",
                                           apart=False))
    # Q10: two pollution sensors observing the same kind of property
    out["Q10"] = dict(streams=[poll1, poll2], reshaped=None, written=(
        f"REGISTER QUERY Q10 AS\nselect ?obId1 ?obId2 #?v1 ?v2\n"
        f"from stream <{SES}{poll1}> [range 3s step 1s]\nfrom stream <{SES}{poll2}> [range 3s step 1s]\n"
        f"FROM <repository>\nwhere {{\n{_obs('obId1', 'p1', 'v1', poll1)}\n{_obs('obId2', 'p2', 'v2', poll2)}}}"))
    # Q11: ASK (CityBench's negation, which never holds)
    out["Q11"] = dict(streams=[weather], reshaped=None, written=(
        f"REGISTER QUERY Q11 AS ### negation: an observation that is not bound\nAsk\n"
        f"from stream <{SES}{weather}> [range 3s step 1s]\nwhere {{\n"
        f"{_obs('obId1', 'p1', 'v1', weather)}\nFilter (!bound(?obId1))\n}}"))
    # Q12: how many congestion readings each road gave
    def q12(apart: bool) -> str:
        typed = "" if apart else _type("p1", "CongestionLevel")
        return (f"REGISTER QUERY Q12 AS\n### ?obId1 is not projected: it would have to be grouped.\n"
                f"### the count per service\n\nselect (count(?obId1) as ?obCnt)\n"
                f"  from stream <{SES}{traffic3}> [range 3000ms step 1s]\n  FROM <repository>\nwhere {{\n"
                f"{_type('p1', 'CongestionLevel') if apart else ''}\n\n"
                f"{{{typed}?obId1 a ?ob.\n?obId1 <{SSN}observedProperty> ?p1.\n?obId1 <{SAO}hasValue> ?v1.\n"
                f"?obId1 <{SSN}observedBy> ?service1.\n}}\nFilter(?v1 >= -1)\n}}\ngroup by ?service1\n\n"
                f"having (count(?obId1) > 2)")
    out["Q12"] = dict(streams=[traffic3], written=q12(True), reshaped=q12(False))
    return out


# ------------------------------------------------------------------------------------ inputs

def _nt(s: str, p: str, o: str) -> str:
    return f"<{s}> <{p}> {o} .\n"


def _double(value: float) -> str:
    return f'"{value!r}"^^<{DOUBLE}>'


def generated_repository(path: Path, services: int, rng: random.Random) -> dict[str, dict[str, str]]:
    """A sensor repository like CityBench's, as N-Triples: ``services`` traffic sensors (the
    streams' three among them) and the other sensors the queries read. Returns service ->
    property type -> property IRI."""
    properties: dict[str, dict[str, str]] = {}
    names = [s for s in STREAMS] + [f"AarhusTrafficData{100000 + i}" for i in range(max(0, services - 3))]
    with open(path, "w") as f:
        for n, service in enumerate(names):
            kinds = STREAMS.get(service, TRAFFIC)
            foi = f"{SES}FoI-{n}"
            f.write(_nt(SES + service, RDF_TYPE, f"<{SSN}Sensor>"))
            for kind in kinds:
                prop = f"{SES}Property-{n}-{kind}"
                properties.setdefault(service, {})[kind] = prop
                f.write(_nt(SES + service, SSN + "observes", f"<{prop}>"))
                f.write(_nt(prop, RDF_TYPE, f"<{CT}{kind}>"))
                f.write(_nt(prop, SSN + "isPropertyOf", f"<{foi}>"))
            lat, lon = 56.1 + rng.random() / 10, 10.1 + rng.random() / 10
            for side in ("Start", "End"):
                f.write(_nt(foi, f"{CT}has{side}Latitude", _double(lat)))
                f.write(_nt(foi, f"{CT}has{side}Longitude", _double(lon)))
    return properties


def generated_rows(service: str, seconds: int, rng: random.Random) -> Iterator[dict[str, float]]:
    """``seconds`` rows of ``service``'s stream (property type -> value), shaped like Aarhus's."""
    kinds = STREAMS[service]
    distance = rng.randint(300, 3000)
    for _ in range(seconds):
        if kinds is TRAFFIC:
            speed, count = rng.uniform(0, 90), rng.randint(0, 40)
            yield {"AvgSpeed": speed, "VehicleCount": float(count), "MeasuredTime": rng.uniform(20, 200),
                   "EstimatedTime": distance / speed if speed else -1.0, "CongestionLevel": count / distance}
        else:
            yield {kind: float(rng.randint(0, 100)) for kind in kinds}


def real_rows(service: str, seconds: int, data: Path) -> Iterator[dict[str, float]]:
    """CityBench's conversion of the raw rows of a stream (its Aarhus*Stream classes)."""
    kinds = STREAMS[service]
    distance = {}
    if kinds is TRAFFIC:
        with open(data / "trafficMetaData.csv") as f:
            distance = {r["REPORT_ID"]: float(r["DISTANCE_IN_METERS"]) for r in csv.DictReader(f)}
    with open(data / f"{service}.stream") as f:
        for n, row in enumerate(csv.DictReader(f)):
            if n == seconds:
                return
            if kinds is TRAFFIC:
                d, speed, count = distance[row["REPORT_ID"]], float(row["avgSpeed"]), float(row["vehicleCount"])
                yield {"AvgSpeed": speed, "VehicleCount": count, "MeasuredTime": float(row["avgMeasuredTime"]),
                       "EstimatedTime": d / speed if speed else -1.0, "CongestionLevel": count / d if d else -1.0}
            elif "Weather" in service:
                yield {"Temperature": float(row["tempm"]), "Humidity": float(row["hum"]),
                       "WindSpeed": float(row["wspdm"])}
            elif "Parking" in service:
                yield {"ParkingVacancy": float(row["totalspaces"]) - float(row["vehiclecount"])}
            else:
                yield {"API": float(row["ozone"])}


def real_properties(repository: Path) -> dict[str, dict[str, str]]:
    """service -> property type -> property IRI, read from CityBench's repository."""
    import rdflib

    graph = rdflib.Graph()
    graph.parse(repository, format="n3")
    out: dict[str, dict[str, str]] = {}
    for service in STREAMS:
        for prop in graph.objects(rdflib.URIRef(SES + service), rdflib.URIRef(SSN + "observes")):
            for kind in graph.objects(prop, rdflib.RDF.type):
                out.setdefault(service, {})[str(kind).rsplit("#", 1)[-1]] = str(prop)
    return out


def write_stream(path: Path, services: list[str], properties: dict, seconds: int, rows_of) -> int:
    """The observations of ``services`` as JSON Lines of N-Triples-shaped Turtle, one record per
    row and stream, one row per second; returns the number of triples."""
    records, triples = [], 0
    for service in services:
        for n, values in enumerate(rows_of(service)):
            lines = []
            for kind, value in values.items():
                if kind not in properties[service]:
                    continue
                ob = f"<{SES}{service}-Observation-{n}-{kind}>"
                lines.append(f"{ob} <{RDF_TYPE}> <{SSN}Observation> . {ob} <{SSN}observedBy> <{SES}{service}> . "
                             f"{ob} <{SSN}observedProperty> <{properties[service][kind]}> . "
                             f"{ob} <{SAO}hasValue> {_double(value)} .")
                triples += 4
            records.append((n * 1000, service, " ".join(lines)))
    records.sort(key=lambda r: r[0])
    with open(path, "w") as f:
        for t, service, turtle in records:
            f.write(json.dumps({"t": t, "stream": SES + service, "turtle": turtle}) + "\n")
    return triples
