"""A /proc file's text, shared by the samplers (schedstat_sample.py, thread_syscalls.py, wakeups_per_round_trip.py)."""


def read(path):
    """The file's text, stripped; None if it cannot be read (the task or process is gone)."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None
