"""Judge validity: the judges, the consensus and the rule-based judges against human labels.
:mod:`.measures` holds the pure measures (accuracy, kappa, AC1, precision, recall, F1 with
claim-block CIs) and the human reference; :mod:`.load` reads what they compare from the store
(labels, verdicts, the analysis' own consensus, texts). Import from the module that defines a
name; this file re-exports nothing."""
