"""What loading a background may touch, through ``dotr run`` as a user meets it: an
``owl:imports`` is followed only with ``--follow-imports`` (local files; ``=remote``: HTTP too),
a JSON-LD remote context is refused, an XML entity bomb is refused within seconds. A loopback
HTTP listener started here counts the requests that reach it."""

import http.server
import json
import subprocess
import sys
import threading
import time

import pytest

RULES = """@prefix : <http://ex.org/> .
alarm(S) :- smoke(S), :inRoom(S, :kitchen) .
"""
IMPORTED = "@prefix : <http://ex.org/> . :s1 :inRoom :kitchen ."
STREAM = json.dumps({"t": 1, "facts": ["smoke(<http://ex.org/s1>)"]}) + "\n"


@pytest.fixture
def listener():
    """A loopback HTTP server answering every GET with the imported Turtle; its requests listed."""
    requests: list[str] = []
    served = {"turtle": IMPORTED}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            body = served["turtle"].encode() if self.path.endswith(".ttl") else json.dumps({"@vocab": "http://ex.org/"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/turtle" if self.path.endswith(".ttl") else "application/ld+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", requests, served
    server.shutdown()
    server.server_close()


def _run(tmp_path, ontology, *options, timeout=60):
    (tmp_path / "rules.dotr").write_text(RULES)
    (tmp_path / "stream.jsonl").write_text(STREAM)
    return subprocess.run([sys.executable, "-m", "dotr", "run", "--rules", str(tmp_path / "rules.dotr"),
                           "--ontology", str(ontology), "--input", str(tmp_path / "stream.jsonl"), "-q", *options],
                          capture_output=True, text=True, timeout=timeout)


def _importing(tmp_path, target):
    path = tmp_path / "main.ttl"
    path.write_text(f"@prefix owl: <http://www.w3.org/2002/07/owl#> . <http://ex.org/main> owl:imports <{target}> .")
    return path


def test_a_remote_import_is_named_not_fetched(tmp_path, listener):
    url, requests, _ = listener
    proc = _run(tmp_path, _importing(tmp_path, f"{url}/onto.ttl"))
    assert proc.returncode == 0, proc.stderr
    assert requests == []
    assert f"imports <{url}/onto.ttl>, not followed" in proc.stderr
    assert proc.stderr.count("not followed") == 1
    assert "alarm" not in proc.stdout
    # --follow-imports alone reads local files only
    proc = _run(tmp_path, _importing(tmp_path, f"{url}/onto.ttl"), "--follow-imports")
    assert requests == [] and "not followed" in proc.stderr


def test_follow_imports_remote_fetches_it(tmp_path, listener):
    url, requests, _ = listener
    proc = _run(tmp_path, _importing(tmp_path, f"{url}/onto.ttl"), "--follow-imports=remote")
    assert proc.returncode == 0, proc.stderr
    assert requests == ["/onto.ttl"]
    assert "alarm(:s1)" in proc.stdout


def test_a_local_import_is_read_with_the_flag_only(tmp_path):
    (tmp_path / "rooms.ttl").write_text(IMPORTED)
    main = _importing(tmp_path, "rooms.ttl")  # (relative: resolved against the importing file)
    proc = _run(tmp_path, main)
    assert proc.returncode == 0, proc.stderr
    assert "not followed" in proc.stderr and "alarm" not in proc.stdout
    proc = _run(tmp_path, main, "--follow-imports")
    assert proc.returncode == 0, proc.stderr
    assert "not followed" not in proc.stderr
    assert "alarm(:s1)" in proc.stdout


def test_a_remote_document_does_not_open_local_files(tmp_path, listener):
    url, requests, served = listener
    secret = tmp_path / "secret.ttl"
    secret.write_text(IMPORTED)
    served["turtle"] = f"@prefix owl: <http://www.w3.org/2002/07/owl#> . <{url}/onto> owl:imports <{secret.as_uri()}> ."
    proc = _run(tmp_path, _importing(tmp_path, f"{url}/onto.ttl"), "--follow-imports=remote")
    assert requests == ["/onto.ttl"]
    assert "does not open local files" in proc.stderr
    assert "alarm" not in proc.stdout


def test_a_json_ld_remote_context_is_refused(tmp_path, listener):
    url, requests, _ = listener
    path = tmp_path / "bg.jsonld"
    path.write_text(json.dumps({"@context": f"{url}/context.jsonld", "@id": "http://ex.org/s1",
                                "inRoom": {"@id": "http://ex.org/kitchen"}}))
    proc = _run(tmp_path, path)
    assert proc.returncode == 2
    assert requests == []
    assert f"bg.jsonld: the JSON-LD context '{url}/context.jsonld' is another document: refused" in proc.stderr
    assert "Traceback" not in proc.stderr


def _billion_laughs() -> str:
    entities = '<!ENTITY lol0 "lol">' + "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))
    return (f'<?xml version="1.0"?><!DOCTYPE rdf:RDF [{entities}]>'
            '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://ex.org/">'
            '<rdf:Description rdf:about="http://ex.org/s"><e:p>&lol9;</e:p></rdf:Description></rdf:RDF>')


@pytest.mark.parametrize("name", ["bomb.rdf", "bomb.owl"])
def test_the_billion_laughs_is_refused_in_seconds(tmp_path, name):
    path = tmp_path / name
    path.write_text(_billion_laughs())
    assert len(path.read_bytes()) < 1024
    started = time.monotonic()
    proc = _run(tmp_path, path, timeout=30)
    assert time.monotonic() - started < 20
    assert proc.returncode == 2
    assert f"{name}: the entity" in proc.stderr and "(an XML entity bomb): refused" in proc.stderr


def test_an_external_entity_is_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    path = tmp_path / "xxe.rdf"
    path.write_text(f'<?xml version="1.0"?><!DOCTYPE rdf:RDF [<!ENTITY x SYSTEM "{secret.as_uri()}">]>'
                    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://ex.org/">'
                    '<rdf:Description rdf:about="http://ex.org/s"><e:p>&x;</e:p></rdf:Description></rdf:RDF>')
    proc = _run(tmp_path, path)
    assert proc.returncode == 2
    assert "an external XML entity): refused" in proc.stderr
