"""A stand-in for pqscope-vboard with the same command line: the fake device on a pty.

The image's scheme and impl come from its path (build/<preset>/images/<scheme>/<impl>.elf).
FAKE_VBOARD_ERROR makes it fail at startup like the real emulator; FAKE_DEVICE holds Behaviour
fields as JSON, for every image or, with FAKE_DEVICE_IMAGE="<scheme>/<impl>", for that one only.
FAKE_VBOARD_STOPPED names a file created when the device first leaves a command unanswered.
Like the emulator, it reports "vboard: idle rx=N tx=M" when it has answered everything received.
"""

import argparse
import json
import os
import signal
import sys
import threading
import time
import tty
from pathlib import Path

from fakedevice import Behaviour, FakeDevice, make_info


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--elf", type=Path, required=True)
    parser.add_argument("--uart", choices=["pty", "stdio"], required=True)
    parser.add_argument("--stats", type=Path)
    parser.add_argument("--max-cycles", type=int)
    parser.add_argument("--uid", required=True)  # the host names every board it starts
    args = parser.parse_args()
    if "FAKE_VBOARD_ERROR" in os.environ:
        print(f"vboard: error: {os.environ['FAKE_VBOARD_ERROR']}", file=sys.stderr)
        return 2
    master, slave = os.openpty()
    tty.setraw(slave)
    image = f"{args.elf.parent.name}/{args.elf.stem}"
    behaviour = Behaviour()
    if os.environ.get("FAKE_DEVICE_IMAGE", image) == image:
        behaviour = Behaviour(**json.loads(os.environ.get("FAKE_DEVICE", "{}")))
    device = FakeDevice(master, make_info(scheme=args.elf.parent.name, impl=args.elf.stem, serial=args.uid), behaviour,
                        on_idle=lambda rx, tx: print(f"vboard: idle rx={rx} tx={tx}", file=sys.stderr, flush=True))
    if "FAKE_VBOARD_STOPPED" in os.environ:
        stopped = Path(os.environ["FAKE_VBOARD_STOPPED"])
        threading.Thread(target=lambda: device.stopped_answering.wait() and stopped.touch(), daemon=True).start()
    started = time.monotonic()
    # A flag, not an Event: the handler runs in this thread between two bytecodes, which can be
    # inside Event.wait with its lock held, and Event.set would then wait for that lock forever
    # (the process outlived its test, deaf to SIGTERM).
    terminated = []
    signal.signal(signal.SIGTERM, lambda *_: terminated.append(True))
    print(f"vboard: uart {os.ttyname(slave)}", file=sys.stderr, flush=True)
    device.start()  # after the line above: its idle lines go to stderr too
    while not terminated:  # the handler (SIGTERM, and pqscope's death signal) runs between sleeps
        time.sleep(0.1)
    device.stop()
    if args.stats:
        wall = time.monotonic() - started
        args.stats.write_text(json.dumps({
            "model_cycles": device.model_cycles, "wall_seconds": wall, "run_seconds": wall,
            "model_cycles_per_second": device.model_cycles / wall,
        }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
