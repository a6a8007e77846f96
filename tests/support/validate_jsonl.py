#!/usr/bin/env python3
"""Validates every line of a JSON-lines file against a JSON Schema (Draft 2020-12).

usage: validate_jsonl.py SCHEMA FILE
Exit status 0 when every line is a JSON document valid against SCHEMA (and there is at least
one); 1 otherwise, with one message per invalid line on stdout.
"""
import json
import sys

import jsonschema


def main() -> int:
    schema_path, data_path = sys.argv[1], sys.argv[2]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = lines = 0
    with open(data_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            lines += 1
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as e:
                print(f"line {n}: not JSON: {e}")
                bad += 1
                continue
            for err in validator.iter_errors(doc):
                print(f"line {n}: {'/'.join(map(str, err.absolute_path))}: {err.message}")
                bad += 1
    if lines == 0:
        print("no lines")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
