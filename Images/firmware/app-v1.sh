#!/bin/sh
# BlueOTA sample firmware 1.0.0: a stand-in for a real application, small enough to read. otad never
# runs it; the health check (health-check.sh) does, with --self-test, to decide the trial. The image
# carries 40 KiB of made-up assets after this script (so that a transfer takes a moment); the shell
# never reads them, as the script ends with exit.
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
exit 0
