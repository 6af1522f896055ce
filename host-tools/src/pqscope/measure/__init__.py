"""One measurement's lifecycle (build, connect, check, capture to disk, finish, resume) and the
captures that say what is measured."""
