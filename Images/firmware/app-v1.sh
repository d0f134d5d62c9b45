#!/bin/sh
# BlueOTA sample firmware 1.0.0: a stand-in for a real application, small enough to read. otad never
# runs it; the health check (health-check.sh) does, with --self-test, to decide the trial.
VERSION=1.0.0
case "${1:-}" in
  --self-test)
    echo "firmware $VERSION self-test: sensors ok, storage ok"
    exit 0
    ;;
  *)
    echo "firmware $VERSION running"
    ;;
esac
