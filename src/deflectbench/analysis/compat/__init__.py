"""The release's analysis script: its five quirks as flags of one class (:mod:`.quirks`, the
only place they are written) and the audit of how far each moves the headline numbers
(:mod:`.audit`). Import from the module that defines a name; this file re-exports nothing."""
