"""Exceptions ssdlab raises for problems a user can act on.

The CLI prints these as one line (no traceback) and exits non-zero.
"""

from __future__ import annotations


class SsdlabError(Exception):
    """Base class: the message is complete and meant for the user."""


class InputError(SsdlabError):
    """A file given to ssdlab is missing, malformed or not what it claims to be."""


class SuiteError(SsdlabError):
    """A suite file does not validate."""


class FioError(SsdlabError):
    """fio is missing or a fio run failed."""


class ReportError(SsdlabError):
    """Executing or converting a report notebook failed."""


class RunInterrupted(SsdlabError):
    """The user stopped the run; everything measured so far is kept."""
