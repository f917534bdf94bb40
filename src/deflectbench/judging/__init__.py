"""Judging: the rubric, its parser and rules, the rule-based judge, consensus."""
