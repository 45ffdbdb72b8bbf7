"""The declared shapes of the session page's JSON twins (docs/product.md Interfaces: every page has one;
they appear in `/openapi.json`).

A twin carries what its page shows, from the same views (`rows.RowView`): a row's
kind-specific facts sit under a key of their own (`tool`, `command`, `compaction`,
`retry`, …) that is null for the other kinds. Interface words are in English.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel

from ...forms import ContextView
from ...forms.jsformat import TEXT_LIMIT
from ...forms.tool_outcomes import SearchListing
from ...sessions.wire import Twin
from .clock import WallClock
from .rows import (
    AnswerView,
    AnyBody,
    Block,
    BlockKind,
    BubbleView,
    CommandView,
    MarkerView,
    RetryView,
    RowView,
    StopView,
    ToolView,
    rendered_markdown,
)
from .strings import ENGLISH


class BlockJson(Twin):
    kind: BlockKind
    text: str  # the text of a text or think block (a Markdown block's HTML, an image's label)
    summary: str | None = None  # a think block's first line
    json_text: str | None = None  # an unknown block's JSON

    model_config = ConfigDict(alias_generator=lambda name: "json" if name == "json_text" else to_camel(name))


class BodyJson(Twin):
    """How much of a body the twin carries: `total` UTF-16 units whole, cut at the default cap when
    `truncated`; `/api/sessions/{key}/bodies/{seq}?part=` answers it whole."""

    part: str
    total: int
    truncated: bool


class SubcallJson(Twin):
    name: str
    is_error: bool
    arguments: str
    output: str | None
    ask: str | None  # how its IN shows what it asked, as `ToolJson.ask`


class SearchListingJson(Twin):
    """A search result's listing (`forms.tool_outcomes.SearchListing`): its shape and counts."""

    shape: str  # matches (grep) or paths (glob)
    shown: int
    total: int
    files: int


class ToolJson(Twin):
    """What a tool row shows: its header, IN and OUT, its sub-calls, what the model saw once pruned, its notes."""

    name: str
    call_id: str | None
    variant: str
    title: str
    summary: str
    path: str | None
    state: str
    error_code: str | None
    result_message_id: str | None
    arguments: str
    output: str | None
    pruned: str | None
    notes: list[str]
    subcalls: list[SubcallJson]
    single_file: bool  # a read, write or edit of one file: its header names the file (docs/ui.md §5.3)
    command: str | None  # a shell tool's command line, as its copy button copies it
    child_session: str | None  # the subagent session the call names (the page links it when it is loaded)
    # how the card's IN shows what was asked (edit, write, command, read, search, code); None: as JSON
    ask: str | None
    exit_code: int | None  # a shell command's exit, as its pill says (its OUT is without the line saying so)
    signal: str | None  # the signal that killed a shell command
    listing: SearchListingJson | None


class ContextJson(Twin):
    role: str
    title: str
    label: str | None
    declared_form: str | None
    rendered_form: str | None
    summary: str | None


class CompactionJson(Twin):
    items: int | None  # history items it shadowed
    tokens: str | None  # `shadowedTokenCount`, as the marker words it
    summary: str | None  # the summary's Markdown source
    markdown: str | None  # its HTML, to the default cap
    checkpoint_id: str | None


class CommandJson(Twin):
    args: str
    line: str  # the command as typed, as its copy button copies it


class TimingJson(Twin):
    """How fast an assistant step's answer streamed, from the times its events carry."""

    ttft_ms: int  # its request's start to its first streamed delta
    tokens_per_second: float | None  # `outputTokens` over the streaming; None when not logged


class RetryJson(Twin):
    summary: str
    retry: str
    maximum: str
    seconds: str
    delay: str
    message: str
    code: str
    streamed: str | None  # what the failed attempt streamed


class StopJson(Twin):
    """A turn that failed or reached the token limit."""

    title: str
    text: str
    code: str | None


class FindingJson(Twin):
    """A finding where it lies: its file, and its line or row and byte offset there."""

    code: str
    severity: str
    message: str
    file: str | None
    line: int | None
    row: int | None
    offset: int | None


class DiagnosticJson(FindingJson):
    """A finding where it lies; an unreadable record's kind and reason with it."""

    kind: str | None = None
    reason: str | None = None


class RunJson(Twin):
    """A run row's events: how many, and the seqs they run over (`first` to `last`)."""

    count: int
    first: int
    last: int


class RowJson(Twin):
    kind: str
    seq: int
    key: str
    anchor: str
    links: dict[str, list[int]]
    type: str | None
    message_id: str | None  # the message the row stands for, whole (`anchor` names a long one by its handle)
    step: str | None
    title: str
    summary: str
    state: str
    error: bool  # the row reports a failure: a red dot on the page, a hit of *errors only*
    dot: Literal["error", "stopped"] | None  # the state dot the row shows: red for an error, amber for a stop
    bookkeeping: bool
    facts: list[str]
    detail: str | None
    outside: str | None  # why dsh would not load what the row shows (or, on a finding, what follows)
    time: str | None  # when a turn or step started, an answer arrived: ISO 8601 UTC; None when not logged
    timing: TimingJson | None
    bodies: list[BodyJson]
    blocks: list[BlockJson] | None = None
    recall_labels: list[str] | None = None
    tool: ToolJson | None = None
    context: ContextJson | None = None
    command: CommandJson | None = None
    compaction: CompactionJson | None = None
    retry: RetryJson | None = None
    stop: StopJson | None = None
    diagnostic: DiagnosticJson | None = None
    run: RunJson | None = None  # a run row: one row for many like events (`?run={key}` pages its rows)


class ContextRowJson(RowJson):
    body: dict[str, Any]  # the rendered body (docs/ui.md §3), as the open row shows it


class WindowJson(Twin):
    """A window of rows, where it lies, and where its neighbours start."""

    from_: int
    to: int
    total_rows: int | None
    previous_from: int | None
    next_from: int | None
    rows: list[RowJson]
    # a page of a run row's rows: the run's key (`?run=` pages them; `from`, `to` and the rest count its rows)
    run: str | None = None
    # the page of a run row's rows that shows the row `?at=` names, when that row lies inside a run
    opened_run: WindowJson | None = None

    model_config = ConfigDict(alias_generator=lambda name: "from" if name == "from_" else to_camel(name))


class VerdictJson(Twin):
    """What dsh would make of the log: its category, whether it loads, why, where, and what it would repair."""

    category: str
    accepted: bool
    reason: str
    location: str | None
    repairs: list[str]
    dsh: str  # the release whose verdict this is


class RelatedSessionJson(Twin):
    key: str
    id: str | None
    url: str
    how: str  # `parent`; `child` (its header names this one) or `workflow` (this one's workflow started it)


class RelatedJson(Twin):
    """Parent and children loaded together with the session."""

    parents: list[RelatedSessionJson]
    children: list[RelatedSessionJson]


class UploadedJson(Twin):
    """One upload of a session: its bytes, when, and the session's URL as of it."""

    digest: str
    name: str
    size: int
    events: int | None
    uploaded_at: int
    at: WallClock | None
    url: str
    shown: bool  # the upload the page shows


class VersionJson(UploadedJson):
    """A version of an uploaded session, at its newest upload, with every upload along it."""

    number: int
    current: bool
    uploads: list[UploadedJson]


class UsageJson(Twin):
    """A session's token totals."""

    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    reasoning_tokens: int | None
    context_tokens: int | None


class GenerationFileJson(Twin):
    """One file of a session folder's format generations."""

    key: str
    url: str
    path: str
    name: str
    number: int
    current: bool
    as_of_seq: int | None
    shown: bool = Field(alias="self")  # the file this session is


class GenerationJson(Twin):
    """Which of its folder's format generations a session is: the current state, or an earlier one as of a seq."""

    number: int
    current: bool
    as_of_seq: int | None
    current_key: str | None
    current_url: str | None
    files: list[GenerationFileJson]


class NewerFormatJson(Twin):
    """A header whose format is newer than the pinned release reads."""

    version: int | float
    reads: int
    release: str


class SessionJson(WindowJson):
    """A session's facts, verdict, relatives and token totals, with a window of its rows."""

    key: str
    unique: str
    id: str | None
    path: str
    carrier: str
    url: str
    download: str
    upload: str | None
    cwd: str | None
    project_name: str | None  # the cwd's own folder name (present/entries.py project_name)
    created_at: Any  # the header's, as logged
    parent_session: Any  # the header's, as logged
    header: dict[str, Any] | None  # as logged, after dsh's upgrades: a newer harness may add any field
    title: str | None  # as logged: Markdown, maybe
    plain_title: str | None  # as every page names it
    verdict: VerdictJson
    events: int
    messages: int
    turns: int
    steps: int
    diagnostics: list[FindingJson]
    size: int | None
    related: RelatedJson
    versions: list[VersionJson]  # an uploaded session's, oldest first (empty on disk)
    as_of: UploadedJson | None  # the upload shown, when the page shows an earlier one than the newest
    newest: str | None  # an uploaded session's own URL, which shows its newest upload
    usage: UsageJson | None
    # where the time went (`wallMs`, each span kind's `…Ms`, `clockBackwards`, `openSpans`, `steps`), null
    # when the log carries no times: history/spend/timing.py, the same as `check --json` gives
    durations: dict[str, Any] | None = None
    # what its model calls cost (`total` in `currency`, null when none could be priced; `source` the price
    # data; `unknownCalls`), with each step's and turn's sums and how each route was priced: history/spend/cost.py
    cost: dict[str, Any] | None = None
    # `?at=`: the anchor the window was opened at, and the row index it names (null when no row has it:
    # the window is then the first, as on the page)
    at: str | None = None
    at_index: int | None = None
    # which format generation of its session folder this file is (null when the folder holds one),
    # and the format newer than the pinned release reads (null when it is not)
    generation: GenerationJson | None = None
    newer_format: NewerFormatJson | None = None


class EventJson(Twin):
    """One event as stored (after dsh's upgrades); `outside` only for a record dsh would not load."""

    seq: int
    type: str
    synthetic: bool
    event: dict[str, Any]  # the event's JSON, as logged
    outside: str | None = Field(default=None, exclude_if=lambda value: value is None)


class RowSearchAskedJson(Twin):
    q: str
    kind: str
    form: str
    tool: str
    errors: bool
    raw: bool


class RowMatchJson(Twin):
    index: int
    anchor: str
    kind: str
    seq: int


class RowSearchJson(Twin):
    """The rows of one session matching a text and facets, in order."""

    query: RowSearchAskedJson
    matches: list[RowMatchJson]


class LocatedJson(Twin):
    """The row an anchor names: its index, to open its window, and its event's seq."""

    anchor: str
    index: int
    seq: int


class EntryJson(Twin):
    """A loaded session as its header and its source name it, before its log is read."""

    key: str
    id: str | None
    path: str
    carrier: str
    url: str
    unique: str  # the key that names this copy alone, whatever else is loaded
    download: str
    upload: str | None
    cwd: str | None
    project_name: str | None  # the cwd's own folder name (present/entries.py project_name)
    created_at: Any  # the header's, as logged
    parent_session: Any  # the header's, as logged


class SummaryJson(Twin):
    """What the session list shows of a read log; `error` says why one could not be read."""

    title: str | None  # as logged: Markdown, maybe
    plain_title: str | None  # as the list shows it
    turns: int | None
    steps: int | None
    events: int | None
    verdict: str
    first_prompt: str | None
    last_activity_at: int | None
    last_activity: str | None
    tokens: int | None
    errors: int | None
    durations: dict[str, Any] | None = None  # `wallMs` (null without times) and `clockBackwards`
    cost: dict[str, Any] | None = None  # as the session twin's `cost`: total, currency, source, unknownCalls
    models: list[str]  # the models that answered its calls
    error: str | None = Field(default=None, exclude_if=lambda value: value is None)


class GenerationMarkJson(Twin):
    """What the session list says of an earlier format generation, from the file names alone."""

    number: int
    current: bool
    current_key: str | None
    current_url: str | None
    files: int


class ListedJson(EntryJson):
    """A session as a list shows it (present/listed.py)."""

    created: str | None
    project: str | None
    labels: list[str]  # every label of every upload of it (`push --label`); none for a session served from disk
    title: str | None  # None for an identity that may list but not read (`metrics`): its id stands in
    summary: SummaryJson | None  # None until the log is read (`summaries` asks for every one)


class ListedSessionJson(ListedJson):
    generation: GenerationMarkJson | None  # an earlier generation says it is one


class ListFiltersJson(Twin):
    verdict: str
    project: str
    carrier: str
    errors: bool
    label: str
    model: str = ""


class ListChoicesJson(Twin):
    """The values each filter offers."""

    verdicts: list[str]
    projects: list[str]
    carriers: list[str]
    models: list[str]  # of the sessions read so far


class OverviewJson(Twin):
    """The chosen sessions' totals, from those read so far (`read` of `sessions`): tokens, cost, and the median
    and slowest wall time, with the slowest session's page."""

    sessions: int
    read: int
    tokens: int
    cost: dict[str, Any]  # total (null: none read, or none priced), currency, source, unknownCalls
    median_ms: int | None
    slowest_ms: int | None
    slowest: dict[str, str] | None  # its key and url


class RefusedJson(Twin):
    """A file found where sessions are served that holds none, and why."""

    path: str
    reason: str


class ListingJson(Twin):
    """The loaded sessions as chosen: searched, filtered, sorted, a page of them."""

    query: str
    sort: str
    order: str
    filters: ListFiltersJson
    choices: ListChoicesJson
    page: int
    pages: int
    total: int
    loaded: int  # every session loaded, chosen or not
    sessions: list[ListedSessionJson]
    refused: list[RefusedJson]
    overview: OverviewJson | None = None  # the chosen sessions' totals, above the list
    # the store's role (catalog, blobs) while it does not answer: its uploads are listed as last read
    unavailable: str | None = None
    # sessions a sort or filter by a fact of the read could not tell of yet (read in the background): sorted
    # last, or left out of what a filter keeps, until they are read
    reading: int = 0


class UploadSessionJson(EntryJson):
    verdict: str | None  # as the upload found it


class UploadJson(Twin):
    """One upload: its bytes, where they came from, and its sessions."""

    digest: str
    name: str
    size: int
    carrier: str
    media: int  # export images it holds
    uploaded_at: int
    uploaded_by: str | None  # the actor that sent it (`token:NAME`); None without access control
    labels: list[str]  # what its senders labelled it with (`push --label`), first given first
    url: str
    download: str
    sessions: Sequence[UploadSessionJson]
    sessions_kept: int  # its sessions other uploads hold too: a delete leaves them


class ListedUploadSessionJson(UploadSessionJson):
    summary: SummaryJson | None  # the session list's, once read
    title: str | None  # its title as plain text, once read


class ListedUploadJson(UploadJson):
    sessions: Sequence[ListedUploadSessionJson]


class UploadsJson(Twin):
    """A page of uploads (or every one), with how many there are, how many come before, and the next page."""

    uploads: list[ListedUploadJson]
    total: int
    offset: int  # uploads newer than this page's first
    limit: int | None
    next: str | None


class TitledEntryJson(EntryJson):
    plain_title: str | None  # the session's title as every page names it


class CandidateJson(ListedJson):
    same_project: bool  # its header's `cwd` is the compared session's
    compare: str  # the comparison with this session


class SuggestedJson(CandidateJson):
    how: str  # `parent`, `child` or `workflow`, as the session page's relatives say


class ChooserJson(Twin):
    """The sessions to compare session `a` with, as the session list shows them: its parent and children first,
    then the others (those of its project first, newest first), those `q` filters for."""

    a: TitledEntryJson
    q: str
    suggested: list[SuggestedJson]
    others: list[CandidateJson]
    more_others: int  # sessions the filter keeps, not listed


class SideKeysJson(Twin):
    a: str | None
    b: str | None


class SideFlagsJson(Twin):
    a: bool
    b: bool


class SideCountsJson(Twin):
    a: int | None
    b: int | None


class DivergenceJson(Twin):
    """Where the two sessions first differ in one respect, with each side's model view of that step."""

    index: int  # the aligned step's index
    a: str | None  # step key in session a
    b: str | None
    part: str  # what differs
    label: str
    message: int | None  # for a request whose messages differ: the 1-based position of the first that does
    links: SideKeysJson


class ComparedItemJson(Twin):
    kind: str
    seq: int
    label: str
    text: str
    message_id: str | None


class ItemPairJson(Twin):
    status: str
    a: ComparedItemJson | None
    b: ComparedItemJson | None
    words: list[tuple[str, str]]  # a changed pair's words: [op, text]
    whole: bool  # too different to diff word by word: removed and added whole (history/word_diff.py)


class SegmentJson(Twin):
    """A step of each session (or the run between steps), aligned."""

    a: str | None
    b: str | None
    status: str
    request: str  # whether the model read the same at this step
    output: str  # whether it answered the same
    inherited: SideFlagsJson
    request_messages: SideCountsJson  # how many model-visible messages each side's request held


class FoldJson(Twin):
    from_: int
    to: int
    rows: int

    model_config = ConfigDict(alias_generator=lambda name: "from" if name == "from_" else to_camel(name))


class FoldRowJson(Twin):
    """Rows all the same, folded."""

    fold: FoldJson


class StepRowJson(Twin):
    """A step's head: whether what it recorded differs."""

    status: str
    step: SegmentJson


class ItemRowJson(Twin):
    """One thing both sessions (or one of them) recorded at a step."""

    status: str
    item: ItemPairJson
    step: SideKeysJson


class ComparisonJson(Twin):
    """Two sessions aligned step by step, with where they first part: a window of the aligned rows."""

    a: TitledEntryJson
    b: TitledEntryJson
    same: bool
    first_divergence: DivergenceJson | None
    request_divergence: DivergenceJson | None
    output_divergence: DivergenceJson | None
    seed_boundary: SideCountsJson
    ignored: list[str]
    steps: int
    rows: list[FoldRowJson | StepRowJson | ItemRowJson]
    from_: int
    next_from: int | None
    total_rows: int

    model_config = ConfigDict(alias_generator=lambda name: "from" if name == "from_" else to_camel(name))


class ReplacedRangeJson(Twin):
    start: int
    end: int


class ShadowedJson(Twin):
    seq: int
    id: str


class ReplacementJson(Twin):
    """What a replace did: the range of the surface it replaced, and the events it shadowed."""

    seq: int
    kind: str
    message_id: str | None
    range: ReplacedRangeJson
    shadowed: list[ShadowedJson]
    shadowed_token_count: int | None  # dsh's estimate of what the shadowed span cost


class ShrinkJson(ReplacementJson):
    before_step: int  # the index among all steps of the first step that read the shrunk context


class StepBudgetJson(Twin):
    key: str
    turn: int
    step: int
    calls: int
    request_at: int | None  # the answered call's request point; None for a step without a call
    messages: int  # model-visible messages in that request
    answered: bool
    usage: UsageJson | None
    duration_ms: int | None = None  # step/start to step/end; null while open or without times
    ttft_ms: int | None = None  # its answer's wait for the first token
    cost: dict[str, Any] | None = None  # its calls' `total` (in the window's `currency`) and `unknownCalls`


class BudgetJson(Twin):
    """A window of a session's steps: each one's model calls and tokens, and the shrinks of its context."""

    from_: int
    to: int
    total_steps: int
    previous_from: int | None
    next_from: int | None
    context_window: int | None  # the latest route's window, when logged
    currency: str = "USD"  # the steps' costs'
    steps: list[StepBudgetJson]
    shrinks: list[ShrinkJson]

    model_config = ConfigDict(alias_generator=lambda name: "from" if name == "from_" else to_camel(name))


class SpanJson(Twin):
    """One stretch of a session's time (history/spend/timing.py): its kind, start and end in ms since the epoch (`end`
    null while open), its duration (null while open, or when the clock ran backwards: `state`), the row it opens."""

    kind: str  # model, tool, command, wait, compaction, idle or subagent
    start: int
    end: int | None
    duration_ms: int | None
    state: str  # closed, open or backwards
    at: str | None  # the row anchor `?at=` opens
    seq: int
    label: str
    step: str | None
    ttft_ms: int | None  # a model call's wait for its first token
    decoding_ms: int | None  # a model call's first token to its answer
    child: str | None  # a subagent's session id, when the log names it


class SlowestJson(Twin):
    steps: list[dict[str, Any]]  # the step's `durations` entry, with its row's `at`
    tools: list[SpanJson]


class NestedTimelineJson(Twin):
    """A subagent session its parent's timeline opens in place: its spans, each `at` a row of its own page."""

    key: str
    id: str  # the session id the parent's subagent spans name in their `child`
    title: str
    url: str
    spans: list[SpanJson]
    totals: dict[str, Any]


class TimelineJson(Twin):
    """Where a session's time went: every span, the totals (as the session twin's `durations`), the slowest; and
    the subagent sessions loaded with it, each with its own spans."""

    spans: list[SpanJson]
    totals: dict[str, Any]
    first: int | None
    last: int | None
    slowest: SlowestJson
    children: list[NestedTimelineJson]


class MessagePagingJson(Twin):
    """Where a window of a model call's messages lies, and where its neighbours start."""

    from_: int
    to: int
    total_messages: int
    previous_from: int | None
    next_from: int | None

    model_config = ConfigDict(alias_generator=lambda name: "from" if name == "from_" else to_camel(name))


class ModelMessageJson(Twin):
    """A message as the model read it in a request, with the message itself."""

    position: int  # 1-based place in the request
    seq: int
    id: str
    role: str
    source_kind: str
    rendered_form: str | None
    replaced: bool
    inherited: bool
    message: dict[str, Any]  # `{id, role, content, source}`, as logged


class MessagesJson(Twin):
    """A window of one model call's messages."""

    call: int
    from_: int
    to: int
    total_messages: int
    previous_from: int | None
    next_from: int | None
    messages: list[ModelMessageJson]

    model_config = ConfigDict(alias_generator=lambda name: "from" if name == "from_" else to_camel(name))


class CallRefJson(Twin):
    """A model call: its step, and its number there."""

    step: str
    turn: int
    step_number: int
    call: int
    request_at: int


class ChunksJson(Twin):
    first: int | None
    last: int | None
    count: int


class OutcomeJson(Twin):
    kind: str
    finish: str | None
    failure: dict[str, Any] | None  # `LlmFailure`, as logged
    usage: UsageJson | None
    message_id: str | None


def _unless_none(value: Any) -> bool:
    return value is None


class RequestHeaderJson(Twin):
    """The `request/header` in force, in canonical form: a field the header leaves out is left out."""

    seq: int
    reason: str | None
    config: dict[str, Any]
    adapter_defaults: dict[str, Any] | None = Field(default=None, exclude_if=_unless_none)
    system: str | None = Field(default=None, exclude_if=_unless_none)
    tools: Any = Field(default=None, exclude_if=_unless_none)  # each tool's schema as logged (or what was logged)


class SettingJson(Twin):
    value: Any  # as logged; None when unset
    seq: int | None  # the deciding event; None for the default or the header's value
    detail: str | None


class AddedJson(Twin):
    seq: int
    id: str


class FieldChangeJson(Twin):
    field: str
    before: Any
    after: Any


class HeaderChangeJson(Twin):
    seq: int
    reason: str | None
    first: bool
    fields: list[FieldChangeJson]


class StateChangeJson(Twin):
    name: str
    before: Any
    after: Any
    seq: int | None


class DiffJson(Twin):
    """What changed since the call before: messages added and replaced, the header, the state."""

    previous: CallRefJson | None
    added: list[AddedJson]
    replaced: list[ReplacementJson]
    header: list[HeaderChangeJson]
    state: list[StateChangeJson]


class CallJson(Twin):
    """One model call of a step: what it read (a window of its messages), what it answered, what changed."""

    number: int
    answered: bool
    request_at: int
    chunks: ChunksJson
    retry_seq: int | None
    message_seq: int | None
    outcome: OutcomeJson
    header: RequestHeaderJson | None
    state: dict[str, SettingJson]
    seed_boundary: int | None
    message_window: MessagePagingJson
    messages: list[ModelMessageJson]
    diff: DiffJson


class StepKeyJson(Twin):
    key: str
    turn: int
    step: int
    start: int
    end: int


class StepJson(Twin):
    """What the model read at one step: every call's request."""

    step: StepKeyJson
    previous_step: str | None
    next_step: str | None
    calls: list[CallJson]


class MessageBodyJson(Twin):
    """The message an event holds, as the model read it."""

    seq: int
    role: str
    shown_as: str
    rendered_form: str | None
    message: dict[str, Any]


class InboxCarrierJson(Twin):
    """A splice that queued the message."""

    role: Literal["inbox"]
    seq: int
    type: str
    target: str | None
    fate: str
    taken_at: int | None
    message: dict[str, Any] | None


class MessageCarrierJson(Twin):
    """A surface event holding the message."""

    role: Literal["message"]
    seq: int
    type: str
    appended: bool
    replacement: ReplacementJson | None
    keeps_id_of: list[int]
    shadowed_by: int | None
    model_visible: bool
    message: dict[str, Any] | None
    requests: list[CallRefJson]


class WholeBodyJson(Twin):
    """One body of a row, whole: `length` counts its UTF-16 units."""

    seq: int
    part: str
    markdown: bool
    length: int
    text: str


class IdentityJson(Twin):
    """Every event carrying one message id, and the model requests that included it."""

    id: str
    carriers: list[Annotated[InboxCarrierJson | MessageCarrierJson, Field(discriminator="role")]]
    requests: list[CallRefJson]


def _block(b: Block) -> BlockJson:
    if b.kind == "markdown":
        text = str(rendered_markdown(b.body) or "")
    elif b.label is not None:
        text = str(b.label)
    else:
        text = b.body.text if b.body is not None and b.kind in ("text", "think") else ""
    json = b.body.text if b.kind == "json" and b.body is not None else None
    return BlockJson(kind=b.kind, text=text, summary=b.summary or None, json_text=json)


def _body(body: AnyBody) -> BodyJson:
    shown = body.capped(TEXT_LIMIT)
    return BodyJson(part=body.part, total=shown.total, truncated=shown.truncated)


def _tool(view: RowView, tool: ToolView) -> ToolJson:
    p = tool.presentation
    return ToolJson(
        name=tool.name,
        call_id=tool.call_id,
        variant=p.variant,
        title=p.title,
        summary=p.summary,
        path=p.path,
        state=view.state,
        error_code=tool.error_code,
        result_message_id=tool.result_message_id,
        arguments=tool.arguments.text,
        output=tool.output.text if tool.output else None,
        pruned=tool.pruned.text if tool.pruned else None,
        notes=[str(n) for n in tool.notes],
        subcalls=[
            SubcallJson(
                name=s.name,
                is_error=s.is_error,
                arguments=s.arguments.text,
                output=s.output.text if s.output else None,
                ask=s.ask.kind if s.ask is not None else None,
            )
            for s in tool.subcalls
        ],
        single_file=tool.single_file,
        command=tool.command,
        child_session=tool.child_session,
        ask=p.ask.kind if p.ask is not None else None,
        exit_code=tool.exit.code if tool.exit is not None else None,
        signal=tool.exit.signal if tool.exit is not None else None,
        listing=_listing(tool.listing) if tool.listing is not None else None,
    )


def _listing(listing: SearchListing) -> SearchListingJson:
    return SearchListingJson(shape=listing.shape, shown=listing.shown, total=listing.total, files=listing.files)


def _compaction(marker: MarkerView) -> CompactionJson:
    html = rendered_markdown(marker.body)
    return CompactionJson(
        items=marker.items,
        tokens=marker.tokens,
        summary=marker.body.text if marker.body is not None else None,
        markdown=str(html) if html is not None else None,
        checkpoint_id=marker.checkpoint_id,
    )


def _context(c: ContextView) -> ContextJson:
    return ContextJson(
        role=c.role,
        title=ENGLISH(c.title_key),
        label=c.label,
        declared_form=c.declared_form,
        rendered_form=c.rendered_form,
        summary=c.header_summary,
    )


def _diagnostic(view: RowView) -> DiagnosticJson | None:
    d, tail = view.row.diagnostic, view.row.tail
    if d is None:
        return None
    record = {"kind": tail.kind, "reason": tail.reason} if tail is not None else {}
    return DiagnosticJson.model_validate({**d.to_json(), **record})


def row_json(view: RowView) -> RowJson:
    part, marker = view.part, view.marker
    timing = view.timing
    return RowJson(
        kind=view.row.kind,
        seq=view.row.seq,
        key=view.row.key,
        anchor=view.anchor,
        links={k: list(v) for k, v in view.row.links},
        type=view.type,
        message_id=view.identity,
        step=view.step,
        title=str(view.title),
        summary=str(view.summary),
        state=view.state,
        error=view.error,
        dot=view.dot,
        bookkeeping=view.bookkeeping,
        facts=[str(p) for p in view.fact_phrases],
        detail=view.detail.text if view.detail is not None else None,
        outside=view.row.outside,
        time=view.time.iso if view.time is not None else None,
        timing=TimingJson(ttft_ms=timing.first_token_ms, tokens_per_second=timing.tokens_per_second)
        if timing is not None
        else None,
        bodies=[_body(b) for b in view.bodies()],
        blocks=[_block(b) for b in part.blocks] if isinstance(part, BubbleView | AnswerView) else None,
        recall_labels=list(part.recall_labels) if isinstance(part, BubbleView) else None,
        tool=_tool(view, part) if isinstance(part, ToolView) else None,
        context=_context(part) if isinstance(part, ContextView) else None,
        command=CommandJson(args=part.args, line=part.line) if isinstance(part, CommandView) else None,
        compaction=_compaction(marker) if marker is not None else None,
        retry=(
            RetryJson(
                summary=str(part.summary),
                retry=part.retry,
                maximum=part.maximum,
                seconds=part.seconds,
                delay=str(part.delay),
                message=part.message,
                code=part.code,
                streamed=part.streamed.text if part.streamed is not None else None,
            )
            if isinstance(part, RetryView)
            else None
        ),
        stop=StopJson(title=str(part.title), text=str(part.text), code=part.code)
        if isinstance(part, StopView)
        else None,
        run=RunJson(count=view.row.count, first=view.row.seq, last=view.row.last) if view.row.count > 1 else None,
        diagnostic=_diagnostic(view),
    )


def context_json(view: RowView) -> ContextRowJson:
    """A context row with its whole body, as the open row shows it."""
    assert isinstance(view.part, ContextView)
    return ContextRowJson(**row_json(view).model_dump(), body=asdict(view.part.body))
