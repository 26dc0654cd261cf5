"""A stand-in worker speaking the worker protocol that can hang, crash or exhaust memory on request."""
import json
import os
import sys
import time

for raw in sys.stdin:
    req = json.loads(raw)
    op = req["op"]
    if op == "hang" or op in os.environ.get("HANG_OPS", "").split(","):
        while True:
            time.sleep(1)
    if op == "crash":
        sys.stderr.write("fatal: simulated crash\n")
        sys.stderr.flush()
        os._exit(3)
    if op == "hog":
        try:
            block = bytearray(8 << 30)  # 8 GiB, over the worker's memory limit
        except MemoryError:
            sys.stdout.write(json.dumps({"ok": False, "error": "the worker ran out of memory"}) + "\n")
            sys.stdout.flush()
            continue
    sys.stdout.write(json.dumps({"id": req["id"], "ok": True, "result": {"pid": os.getpid(), "op": op}}) + "\n")
    sys.stdout.flush()
