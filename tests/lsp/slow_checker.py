"""A stand-in check child (TILELSP_CHECK_CMD) that spins forever on a document containing SLOW_CHECK, like a
pathological check would, and checks every other document normally."""
import os
import pickle
import struct
import sys

from tilelsp.features.check import run_check

HEADER = struct.Struct("<Q")
out = os.fdopen(os.dup(1), "wb")
inp = sys.stdin.buffer
out.write(HEADER.pack(0))  # ready
out.flush()
while True:
    head = inp.read(HEADER.size)
    if len(head) < HEADER.size:
        sys.exit(0)
    text, path, targets = pickle.loads(inp.read(HEADER.unpack(head)[0]))
    while "SLOW_CHECK" in text:
        pass
    data = pickle.dumps(run_check(text, path, targets))
    out.write(HEADER.pack(len(data)) + data)
    out.flush()
