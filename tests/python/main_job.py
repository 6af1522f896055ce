"""The main job's report sections, for a suite with Falcon-512's modes: the same on the virtual
board (tests/virtual-board/test_main_job_virtual.py) and on boards (tests/python/test_main_job.py)."""

SECTIONS = ["Constant-time verdicts", "Cycles, time and memory", "Timing variance", "Falcon-512: floating-point modes",
            "Median cycles", "Cycle distributions", "TLS 1.3 handshake budget", "Every operation's cycles"]
