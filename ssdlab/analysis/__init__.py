"""Figures computed from tidy frames (percentiles, derived review figures)."""

from .percentiles import fio_percentiles

__all__ = ["fio_percentiles"]
