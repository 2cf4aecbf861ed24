#!/usr/bin/env bash
# promtool on deploy/prometheus: the scrape config (and the rule files it
# names) parse, the rules parse, and the rules' unit tests pass.
# Usage: promtool_checks.sh DEPLOY_PROMETHEUS_DIR
set -euo pipefail
dir=$1
command -v promtool >/dev/null ||
  { echo "promtool_checks: promtool not found: install Debian's prometheus (scripts/setup)" >&2; exit 1; }
cd "$dir"
promtool check config prometheus.yml
promtool check rules encoder-rules.yml
promtool test rules rules_test.yml
echo "promtool_checks: config, rules and rule tests pass"
