"""The report sections: what the review, comparison and index notebooks display.

- :mod:`.section`: the :class:`~.section.Section` type, HTML helpers and the registries of
  each notebook's sections;
- :mod:`.drive`: drive-review sections of one run's :class:`~ssdlab.analysis.DriveAnalysis`;
- :mod:`.compare`: comparison sections and the :class:`~.compare.Comparison` they show;
- :mod:`.index`: the batch index's sections.

Sections hold presentation only (findings, charts, tables); the figures come from
:mod:`ssdlab.analysis`.
"""
