"""What the engine says to people: why it refuses an edit (`EditError`), what an edit did
beyond its op (a `Note`) and what the parser finds wrong in a text (a `Problem`'s `Words`), one
code each, the English words here and only here.

The engine knows nothing of Django, so it raises `EditError(code, **values)` and returns notes
made as `Note(code, **values)`; `str()` of either is the English sentence (scripts, tests, the
engine used alone). The web app shows them in the reader's language: `canvases.messages.Said`
looks the code up in `TEXTS` and translates the words through gettext (the table's shape:
`code_words.py`).
"""

from __future__ import annotations

from .code_words import CodeWords, gettext_noop

TEXTS = CodeWords(
    "canvases/mermaid/wording.py",
    {
        # a node, an edge, a field
        "note_too_long": gettext_noop("the note is %(n)s characters long; the limit is %(limit)s"),
        "title_or_summary": gettext_noop("nothing to change: give a title or a summary"),
        "title_empty": gettext_noop("the title cannot be empty"),
        "edge_exists": gettext_noop("there is already an edge %(source)s → %(target)s"),
        "no_edge": gettext_noop("there is no edge %(source)s → %(target)s"),
        "no_node": gettext_noop("there is no node %(node)r in this canvas"),
        "status_empty": gettext_noop("the status cannot be empty"),
        "status_word": gettext_noop(
            "a status is one short word (done, doing, todo, paused, blocked)"
        ),
        "not_text": gettext_noop("%(field)r must be text"),
        # merge
        "merge_nothing": gettext_noop("nothing to merge: give at least one node id"),
        "merge_itself": gettext_noop("merging %(node)s into itself changes nothing"),
        "merge_two": gettext_noop("select at least two nodes to merge"),
        "merge_node_list": gettext_noop("'nodes' must be a list of node ids"),
        "label_not_written": gettext_noop("internal error: the kept node's label was not written"),
        # the metadata line
        "meta_nothing": gettext_noop("nothing to change: give at least one metadata value"),
        "progress_range": gettext_noop("progress must be a number from 0 to 100, not %(value)r"),
        "meta_value": gettext_noop("%(key)s must be text or a number"),
        "header_already": gettext_noop(
            "the agent already reads this canvas's metadata from line 1"
        ),
        # the one-line canvas
        "not_oneliner": gettext_noop("this is not a one-line canvas with literal \\n separators"),
        "repair_fails": gettext_noop("the repaired canvas still does not parse: %(where)s"),
        "problem_at_line": gettext_noop("line %(line)s: %(problem)s"),
        "repair_first": gettext_noop(
            "this canvas is one line full of literal \\n: repair it first"
        ),
        # the result
        "result_would_not_parse": gettext_noop(
            "the result would not parse (%(problem)s): %(line)s"
        ),
        "not_clean": gettext_noop("this edit could not be applied cleanly: %(reason)s"),
        "text_becomes_nodes": gettext_noop(
            "the text left on a line this edit changes would read as new nodes (%(nodes)s): fix the "
            "lines the canvas page marks first"
        ),
        # the budget's steps and bulk actions
        "no_steps": gettext_noop("no steps given"),
        "too_many_steps": gettext_noop("%(count)s steps; at most %(limit)s at once"),
        "step_op": gettext_noop("a step must be an object whose op is one of %(ops)s"),
        "step_node": gettext_noop("a %(op)s step needs 'node'"),
        "step_limit": gettext_noop("'limit' must be a whole number of at least 10"),
        "no_neighbour": gettext_noop(
            "%(node)s has no neighbour to take its rows; merge it instead"
        ),
        "already_short": gettext_noop(
            "the summary of %(node)s is already %(limit)s characters or fewer"
        ),
        "choose_group": gettext_noop("choose a group (subgraph) of this canvas"),
        "group_few_done": gettext_noop("group %(group)s has fewer than two done nodes"),
        "nodes_and_status": gettext_noop("select nodes and a status"),
        "find_what": gettext_noop("type what to find"),
        "no_match": gettext_noop("no node matches %(query)r"),
        "bulk_action": gettext_noop("unknown bulk action; expected one of %(actions)s"),
        # duplicate definitions (canvases/landing.py)
        "not_duplicate": gettext_noop("%(node)s is not defined twice, or not on line %(line)s"),
        "duplicate_shares_line": gettext_noop(
            "another definition of %(node)s shares its line with an edge"
        ),
        # notes: what an edit did to the metadata header beyond its op (mermaid/header.py)
        "header_rewrapped": gettext_noop(
            "rewrote the metadata header, which spanned several lines, as line 1"
        ),
        "header_added": gettext_noop(
            "added a metadata line 1 (`%%%%{ … }%%%%`): without one the agent reads no task goal and "
            "deletes a small canvas as an empty shell"
        ),
        "header_from_loose": gettext_noop(
            "wrote the metadata as strict JSON on line 1, where the agent reads it (was loose "
            "`key: value` members the agent cannot parse); every value kept"
        ),
        "header_from_single_percent": gettext_noop(
            "wrote the metadata as strict JSON on line 1, where the agent reads it (was single "
            "percent signs `%%{ … }%%`, which the agent does not read); every value kept"
        ),
        "header_from_comment": gettext_noop(
            "wrote the metadata as strict JSON on line 1, where the agent reads it (was comment "
            "lines `%%%% key: value`, which the agent ignores); every value kept"
        ),
        "header_from_json": gettext_noop(
            "wrote the metadata as strict JSON on line 1, where the agent reads it (was JSON the "
            "agent cannot read where it stands: %(problem)s); every value kept"
        ),
        "header_from_other": gettext_noop(
            "wrote the metadata as strict JSON on line 1, where the agent reads it (was %(form)s); "
            "every value kept"
        ),
        "key_renamed": gettext_noop("renamed %(key)r to %(agent_key)r, the key the agent reads"),
        # what the parser finds in a text (mermaid/parser.py, lexer.py, mermaid_rules.py)
        "internal_error": gettext_noop("internal parser error: %(error)s"),
        "escaped_oneliner": gettext_noop(
            "one-line file full of literal \\n: mermaid cannot read it (repair offered)"
        ),
        "bom": gettext_noop("byte-order mark before line 1"),
        "unclosed_directive": gettext_noop(
            "'%%%%{' without '}%%%%': mermaid reads it as an unclosed directive"
        ),
        "fenced": gettext_noop("fenced file: mermaid rejects the ``` lines"),
        "not_flowchart": gettext_noop("not a flowchart (%(kind)s)"),
        "header_missing": gettext_noop("missing 'flowchart' or 'graph' header"),
        "no_header": gettext_noop("empty canvas: no 'flowchart' header"),
        "subgraph_open": gettext_noop("subgraph %(id)r has no 'end'"),
        "subgraph_no_id": gettext_noop("subgraph without an id"),
        "end_text": gettext_noop("'end' followed by text"),
        "end_alone": gettext_noop("'end' without a subgraph"),
        "direction_word": gettext_noop("'direction' needs TB, TD, BT, RL or LR"),
        "statement_no_id": gettext_noop("'%(word)s' without a node id"),
        "class_name": gettext_noop("'class' needs one class name, not %(name)r"),
        "meta_not_first": gettext_noop("metadata is not at byte 0 of line 1"),
        "meta_not_json": gettext_noop("metadata is not valid JSON (%(form)s)"),
        "front_matter_empty": gettext_noop("empty front matter"),
        "front_matter_open": gettext_noop("front matter '---' is never closed"),
        "unexpected_text": gettext_noop("unexpected text %(text)r"),
        "reserved_id": gettext_noop("mermaid rejects the node id %(node)r"),
        "escaped_quote": gettext_noop('%(node)s: \\" inside a label breaks mermaid (use #quot;)'),
        "escaped_arrow": gettext_noop("HTML-escaped arrow %(arrow)r: mermaid rejects it"),
        "expected_id": gettext_noop("expected a node id"),
        "unclosed_quote": gettext_noop("unclosed quoted label"),
        "label_not_closed": gettext_noop("label is not closed with %(closer)r"),
        "unclosed_label": gettext_noop("unclosed %(opener)r label"),
        "quote_unquoted": gettext_noop('a " inside an unquoted label'),
        "unknown_shape": gettext_noop("unknown shape"),
        "unclosed_expanded": gettext_noop("unclosed '@{' shape"),
        "directive_in_statement": gettext_noop(
            "'%%%%{' inside a statement: mermaid reads a directive there and drops the text up to "
            "'}%%%%' or the end of the file"
        ),
        "percent_line": gettext_noop(
            "a label line that starts with '%%%%': mermaid removes it as a comment"
        ),
        "percent_in_label": gettext_noop(
            "'%%%%' inside a label: memviz never writes it (mermaid reads '%%%%{' as a directive)"
        ),
        "markdown_string": gettext_noop(
            "a label that starts with ` is a markdown string: mermaid needs it to end with ` and "
            "hold no other `: %(label)r"
        ),
        # how the agent will treat a canvas (mermaid/agent_view.py): lint warnings, and why it reads
        # no metadata (a `reason`, itself a code of this table)
        "no_goal": gettext_noop("the agent will see no task goal: %(reason)s"),
        "goal_empty": gettext_noop("taskGoal is empty"),
        "meta_spans_lines": gettext_noop(
            "the metadata spans several lines: memviz rewrites it as one line on the next edit"
        ),
        "empty_shell": gettext_noop(
            "the agent deletes this canvas when it switches task: no '%%%%{' and at most 3 "
            "non-empty lines (any memviz edit adds a metadata line)"
        ),
        "meta_bom_first": gettext_noop("a byte-order mark comes before the metadata"),
        "meta_unclosed": gettext_noop("the metadata line has no closing '}%%%%'"),
        "meta_single_percent": gettext_noop("the metadata uses single percent signs (%%{ … }%%)"),
        "meta_comment_lines": gettext_noop(
            "the metadata is written as comment lines (%%%% taskGoal: …)"
        ),
        "meta_not_at_start": gettext_noop("the metadata is not at byte 0 of line 1"),
        "meta_none": gettext_noop("the canvas has no metadata line"),
        "meta_not_strict": gettext_noop(
            "the metadata line is not strict JSON (unquoted keys, a typo, or '}%%%%' in a value)"
        ),
    },
)

_words = TEXTS.words


class Words:
    """A code of `TEXTS` and its values: ``str()`` is the English sentence. A value may be
    `Words` itself (a cause inside a sentence); the app translates both (`Said.engine`)."""

    __slots__ = ("code", "values")

    def __init__(self, code: str, **values: object) -> None:
        self.code, self.values = TEXTS.check(code), values

    def __str__(self) -> str:
        return _words(self.code, self.values)

    def __repr__(self) -> str:
        return f"Words({self.code!r}, {self.values!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Words) and (self.code, self.values) == (other.code, other.values)

    def __hash__(self) -> int:
        return hash(self.code)


class EditError(ValueError):
    """An edit that cannot be applied: a code of `TEXTS` and the values its words name."""

    def __init__(self, code: str, **values: object) -> None:
        super().__init__(_words(code, values))
        self.code = code
        self.values = values


class Note(str):
    """What an edit did beyond its op: its English sentence, with the code and values it was
    made from (a `str`, so the engine's callers and JSON take it as text)."""

    code: str
    values: dict[str, object]

    def __new__(cls, code: str, **values: object) -> Note:
        note = super().__new__(cls, _words(code, values))
        note.code, note.values = code, values
        return note
