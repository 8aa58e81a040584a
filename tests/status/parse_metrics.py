"""Parses `aperturectl metrics` output with the Prometheus client library's
two parsers (Prometheus text format and OpenMetrics), checks they agree,
and prints the samples as JSON: {"types": {family: type},
"samples": [[name, {label: value}, value], ...]}. Exits 1 on a parse error."""
import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse
from prometheus_client.parser import text_string_to_metric_families as prom_parse


def samples(families):
    types, out = {}, []
    for family in families:
        types[family.name] = family.type
        for s in family.samples:
            out.append([s.name, dict(s.labels), s.value])
    return types, out


def main():
    text = open(sys.argv[1]).read()
    try:
        om_types, om_samples = samples(om_parse(text))
        prom_types, prom_samples = samples(prom_parse(text))
    except Exception as e:  # the parsers raise ValueError and others
        print("parse error: %s" % e, file=sys.stderr)
        return 1
    key = lambda s: (s[0], sorted(s[1].items()))
    if sorted(om_samples, key=key) != sorted(prom_samples, key=key):
        print("the two parsers disagree", file=sys.stderr)
        return 1
    print(json.dumps({"types": om_types, "samples": om_samples}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
