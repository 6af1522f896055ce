"""The main thread's waits on other threads, in slices. The kernel hands a signal sent to the
process to whichever of its threads it picks, and CPython runs the handler (Ctrl-C's
KeyboardInterrupt, SIGTERM's) in the main thread only once that thread runs Python code again: a
wait in C without a timeout (a lock, a queue, a join) would hold off a signal another thread took
until the wait ends, maybe never (a board that fell silent)."""

import queue
import threading

# The longest a signal another thread took waits for its handler.
SLICE_SECONDS = 0.2


def join(thread: threading.Thread) -> None:
    while thread.is_alive():
        thread.join(SLICE_SECONDS)


def take(arrivals: queue.SimpleQueue):
    """The queue's next item, once one comes."""
    while True:
        try:
            return arrivals.get(timeout=SLICE_SECONDS)
        except queue.Empty:
            continue
