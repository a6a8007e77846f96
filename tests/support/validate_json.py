#!/usr/bin/env python3
"""Validates a JSON document against one of kforge's JSON Schemas (Draft 2020-12).

usage: validate_json.py SCHEMA_FILE DOCUMENT_FILE [SCHEMA_DIR...]
Every *.schema.json under the SCHEMA_DIRs (default: the schema file's folder) is loaded into a
registry by its $id, so a schema may refer to its parts ("run_result.schema.json"). Each schema
file is checked first: no key given twice in one object (json.load would keep the last), and a
valid Draft 2020-12 schema. Exit status 0 when the document is valid; 1 otherwise, with one
message per error on stdout.
"""
import glob
import json
import os
import sys

import jsonschema
from referencing import Registry, Resource


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"keys given twice: {twice}")
    return dict(pairs)


def load_schema(path):
    with open(path, encoding="utf-8") as f:
        schema = json.load(f, object_pairs_hook=no_duplicates)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def main() -> int:
    schema_path, doc_path = sys.argv[1], sys.argv[2]
    dirs = sys.argv[3:] or [os.path.dirname(os.path.abspath(schema_path))]
    resources = []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.schema.json"))):
            s = load_schema(path)
            resources.append((s["$id"], Resource.from_contents(s)))
    schema = load_schema(schema_path)
    validator = jsonschema.Draft202012Validator(
        schema, registry=Registry().with_resources(resources))
    with open(doc_path, encoding="utf-8") as f:
        doc = json.load(f)
    errors = list(validator.iter_errors(doc))
    for e in errors:
        print(f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
