"""How a board's constant-time test is replayed on the virtual board (`ReplaySettings`), kept in
its meta.json ("replay") and in its ct.json's "replay" part."""

from dataclasses import dataclass

from ...project.errors import PqscopeError

FLASH_TIMINGS = ("modelled", "free")  # the emulator's --flash-timing


@dataclass(frozen=True)
class ReplaySettings:
    """How the replay prices the image: flash as the image configures it ("modelled"), or free
    ("free": the 24 MHz model of an image built for 168 MHz, a predictor that lacks the flash)."""

    flash_timing: str = "modelled"

    def emulator_args(self) -> tuple[str, ...]:
        return ("--flash-timing", self.flash_timing)

    def to_json(self) -> dict:
        return {"flash_timing": self.flash_timing}

    @classmethod
    def from_json(cls, data) -> "ReplaySettings | None":
        if data is None:
            return None
        if not (isinstance(data, dict) and data.get("flash_timing") in FLASH_TIMINGS):
            raise PqscopeError(f"cannot resume: meta.json's 'replay' is damaged ({data!r})")
        return cls(data["flash_timing"])
