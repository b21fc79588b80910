#!/usr/bin/env python3
"""A stand-in OpenTelemetry collector for the trace tests: takes OTLP/HTTP protobuf exports on 127.0.0.1,
decodes them with the official protobuf definitions (PyPI opentelemetry-proto) and serves the spans it
got as JSON at GET /spans. Prints its port on the first line of stdout.

--fail: answer every export 503 (a collector in trouble)."""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

FAIL = "--fail" in sys.argv
spans = []
lock = threading.Lock()


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if FAIL:
            self.send_response(503)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        decoded = []
        for resource_spans in request.resource_spans:
            resource = {a.key: value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    decoded.append({
                        "service": resource.get("service.name"),
                        "trace_id": span.trace_id.hex(), "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(), "name": span.name, "kind": span.kind,
                        "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
                        "attributes": {a.key: value(a.value) for a in span.attributes},
                        "status_code": span.status.code, "status_message": span.status.message,
                        "links": [{"trace_id": l.trace_id.hex(), "span_id": l.span_id.hex()} for l in span.links],
                        "content_type": self.headers.get("content-type"),
                        "authorization": self.headers.get("authorization"),
                    })
        with lock:
            spans.extend(decoded)
        reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def do_GET(self):
        with lock:
            body = json.dumps(spans).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
