"""Phrases that more than one report says alike (no imports: any module may use them)."""


def signature_paths(count: int) -> str:
    """"1 signature's path", "2 signatures' paths": what an exact check of `count` followed."""
    return "1 signature's path" if count == 1 else f"{count} signatures' paths"
