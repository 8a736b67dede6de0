"""What memviz answers when a person writes to a live agent: each says why, and promises only
what memviz does."""

DROP_WHILE_LIVE = (
    "the agent looks live ({reasons}): a running gateway re-marks the rows it compresses, which "
    'turns "deleted" back into true, and it reads "deleted" only when a session is loaded again '
    "(spec §4.8.5). Stop the gateway first, or confirm to mark the rows anyway: rows the agent "
    're-marks are then listed on this canvas\'s page and its agent\'s page, with "drop again".'
)
REAPPLY_WHILE_LIVE = (
    "the agent looks live ({reasons}): its map-builder may drop this edit again within two "
    "minutes. Confirm to re-apply it anyway."
)
HEADER_WHILE_LIVE = (
    "memviz wrote the agent-readable metadata line at the top, which moves every line down by "
    "one: a map-builder reply already in flight splices its blocks by line number and can land "
    "one line off. memviz checks the canvas after the agent's next write and offers re-apply"
)
DROP_CONFIRMED = (
    'the rows are marked "deleted", but the agent is running: it drops them from its context only '
    "when the session is loaded again, and may re-mark them meanwhile (the page will say so)"
)
