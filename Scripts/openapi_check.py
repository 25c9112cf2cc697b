#!/usr/bin/env python3
"""Checks StoreGate's OpenAPI document and, optionally, recorded replies against it.

    openapi_check.py SPEC.yaml [EXCHANGES.json]

1. SPEC.yaml must be a valid OpenAPI 3.1 document (openapi-spec-validator).
2. EXCHANGES.json, when given, is a list of recorded replies:
       [{"method": "POST", "path": "/v1/receipts/verify", "status": 200,
         "contentType": "application/json", "body": "<reply text>"}, ...]
   where "path" is the path *template* of the operation. Each reply's status must be
   documented for the operation, its content type must be one the response declares, and a
   JSON body must validate against the response schema (JSON Schema 2020-12, with the
   document's $refs).

Exit status 0 when everything holds; otherwise every problem is printed and the status is 1.
Needs: PyYAML, openapi-spec-validator, jsonschema (pip install openapi-spec-validator).
"""
import json
import sys

import yaml
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012


def pointer(*parts):
    return "#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    with open(argv[1]) as handle:
        spec = yaml.safe_load(handle)
    validate(spec)
    problems = []
    if len(argv) > 2:
        with open(argv[2]) as handle:
            exchanges = json.load(handle)
        registry = Registry().with_resource("urn:storegate:openapi", Resource(contents=spec, specification=DRAFT202012))
        for exchange in exchanges:
            label = f"{exchange['method']} {exchange['path']} -> {exchange['status']}"
            operation = spec["paths"].get(exchange["path"], {}).get(exchange["method"].lower())
            if operation is None:
                problems.append(f"{label}: no such operation in the document")
                continue
            responses = operation.get("responses", {})
            status = str(exchange["status"])
            key = status if status in responses else ("default" if "default" in responses else None)
            if key is None:
                problems.append(f"{label}: status not documented (documented: {', '.join(sorted(responses))})")
                continue
            response = responses[key]
            ref_parts = ["paths", exchange["path"], exchange["method"].lower(), "responses", key]
            if "$ref" in response:
                name = response["$ref"].split("/")[-1]
                response = spec["components"]["responses"][name]
                ref_parts = ["components", "responses", name]
            content = response.get("content", {})
            media = (exchange.get("contentType") or "").split(";")[0].strip()
            if not content:
                continue
            if media not in content:
                problems.append(f"{label}: content type {media!r} not documented ({', '.join(content)})")
                continue
            if media != "application/json":
                continue
            try:
                body = json.loads(exchange["body"])
            except ValueError as error:
                problems.append(f"{label}: body is not JSON: {error}")
                continue
            schema = {"$ref": "urn:storegate:openapi" + pointer(*ref_parts, "content", media, "schema")}
            validator = Draft202012Validator(schema, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER)
            for error in validator.iter_errors(body):
                location = "/".join(str(p) for p in error.absolute_path) or "(root)"
                problems.append(f"{label}: {location}: {error.message[:300]}")
        print(f"checked {len(exchanges)} replies against the document")
    for problem in problems:
        print("PROBLEM:", problem)
    if problems:
        return 1
    print("OpenAPI document valid" + ("; every reply matches it" if len(argv) > 2 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
