"""Dialogs for one kind of engine question each, beyond the generic choice
(``screens.choice``): a reached budget's, where the user may type a new limit
(``budget_question``)."""
