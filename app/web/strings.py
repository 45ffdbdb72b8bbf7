"""The interface strings in English and Chinese (UI.md §2.2 and ours).

The language follows the browser's `Accept-Language`: Chinese when a `zh`
range is preferred over every English one, English otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.forms.jsformat import interpolate

EN: dict[str, str] = {
    "message.contextInjection": "Context injection",
    "message.contextRecall": "Session recall",
    "message.context.instructions.loaded": "loaded",
    "message.context.instructions.added": "added",
    "message.context.instructions.updated": "updated",
    "message.context.instructions.removed": "removed",
    "message.context.catalog.replaced": "Replacement catalog",
    "message.context.catalog.more": "… {count} more",
    "message.context.snapshot.supersedes": "Supersedes earlier snapshots",
    "message.context.relay.from": "From session {session}",
    "message.context.recall.counts": "{retained} kept · {omitted} omitted",
    "message.context.recall.truncated": "truncated",
    "message.context.modelText": "Model-facing text",
    "message.unknownBlock": "Unknown content block",
    "message.extraBlock": "Extra content block",
    "json.truncated": "… truncated, {total} characters total",
    "message.referenceSummary": "Referenced session · {labels}",
    "message.referenceSeparator": ", ",
    "message.compaction": "Context compacted",
    "message.compaction.completed": "Compacted {items} history items (~{tokens} tokens)",
    "message.unknownSurface": "Unknown surface event: {type}",
    "app.title": "dsh-inspect",
    "app.sessions": "Sessions",
    "app.theme": "Theme",
    "app.theme.toggle": "Switch between light and dark",
    "session.events": "{count} events",
    "session.messages": "{count} model-visible messages",
    "session.diagnostics": "{count} diagnostics",
    "session.rawJson": "Raw JSON",
    "verdict.accepted": "accepted",
    "verdict.repaired": "repaired",
    "verdict.refused": "refused",
    "verdict.unsupported": "unsupported",
    "row.event": "Event",
    "row.unknownEvent": "Unknown event: {type}",
    "row.diagnostic": "Not read by dsh",
    "row.stopped": "Stopped",
    "row.permalink": "Link to this message",
    "row.partialStream": "Partial stream",
    "row.turn": "Turn {turn}",
    "row.step": "Step {step}",
    "row.diagnostic.defect": "Unreadable record",
    "row.diagnostic.dropped": "Dropped by dsh",
    "row.diagnostic.pending": "Pending line",
    "tool.state.running": "Running",
    "tool.state.error": "Failed",
    "tool.state.stopped": "Stopped",
    "tool.noResult": "No result was logged.",
    "tool.prunedAs": "The model later saw this result pruned to:",
    "command.running": "Running…",
    "command.completed": "Completed",
    "command.failed": "Command failed",
    "compaction.view": "View compaction summary",
    "compaction.unavailable": "Compaction summary unavailable",
    "retry.done": "Retried model request",
    "retry.waiting": "Waiting to retry model request",
    "retry.delay": "Retry delay: {ms}ms",
    "retry.reason": "Failure reason: {message}",
    "retry.streamed": "What the failed attempt streamed:",
    "turn.failed": "This turn failed",
    "turn.maxTokens": "Output token limit reached",
    "turn.maxTokensHint": "The model stopped at its output token limit.",
    "window.earlier": "Show earlier rows",
    "window.loading": "Loading more rows…",
    "search.placeholder": "Search this session (/)",
    "search.kind": "Row kind",
    "search.form": "Context form",
    "search.tool": "Tool",
    "search.errors": "Errors only",
    "search.any": "any",
    "search.count": "{n} of {m}",
    "search.none": "no matches",
    "search.next": "Next match (j)",
    "search.previous": "Previous match (k)",
    "session.parent": "Parent session",
    "session.children": "Child sessions",
    "session.tokens": "Tokens",
    "event.synthetic": "Not in the file: a crash closer dsh would append when it loads this log.",
    "list.empty": "No sessions loaded.",
    "list.refused": "Not session logs",
}

ZH: dict[str, str] = {
    **EN,
    "message.contextInjection": "上下文注入",
    "message.contextRecall": "跨会话召回",
    "message.context.instructions.loaded": "已载入",
    "message.context.instructions.added": "已新增",
    "message.context.instructions.updated": "已更新",
    "message.context.instructions.removed": "已移除",
    "message.context.catalog.replaced": "替换目录",
    "message.context.catalog.more": "…还有 {count} 条",
    "message.context.snapshot.supersedes": "取代先前的快照",
    "message.context.relay.from": "来自会话 {session}",
    "message.context.recall.counts": "保留 {retained} 条 · 省略 {omitted} 条",
    "message.context.recall.truncated": "已截断",
    "message.context.modelText": "模型读到的原文",
    "message.unknownBlock": "未知内容块",
    "message.extraBlock": "附加内容块",
    "json.truncated": "… 已截断，共 {total} 字符",
    "message.referenceSummary": "引用会话 · {labels}",
    "message.referenceSeparator": "、",
    "message.compaction": "上下文已压缩",
    "message.compaction.completed": "已压缩 {items} 条历史记录（约 {tokens} tokens）",
    "message.unknownSurface": "未知 surface 事件：{type}",
    "app.sessions": "会话",
    "app.theme": "主题",
    "app.theme.toggle": "切换浅色与深色",
    "session.events": "{count} 个事件",
    "session.messages": "{count} 条模型可见消息",
    "session.diagnostics": "{count} 条诊断",
    "session.rawJson": "原始 JSON",
    "verdict.accepted": "可接受",
    "verdict.repaired": "已修复",
    "verdict.refused": "被拒绝",
    "verdict.unsupported": "不支持",
    "row.event": "事件",
    "row.unknownEvent": "未知事件：{type}",
    "row.diagnostic": "dsh 不会读取",
    "row.stopped": "已停止",
    "row.permalink": "链接到此消息",
    "row.partialStream": "未完成的流",
    "row.turn": "第 {turn} 轮",
    "row.step": "第 {step} 步",
    "row.diagnostic.defect": "无法读取的记录",
    "row.diagnostic.dropped": "dsh 会丢弃",
    "row.diagnostic.pending": "未写完的行",
    "tool.state.running": "运行中",
    "tool.state.error": "失败",
    "tool.state.stopped": "已停止",
    "tool.noResult": "日志中没有结果。",
    "tool.prunedAs": "模型之后看到的是裁剪后的结果：",
    "command.running": "运行中…",
    "command.completed": "已完成",
    "command.failed": "命令失败",
    "compaction.view": "查看压缩摘要",
    "compaction.unavailable": "压缩摘要不可用",
    "retry.done": "已重试模型请求",
    "retry.waiting": "等待重试模型请求",
    "retry.delay": "重试延迟：{ms}ms",
    "retry.reason": "失败原因：{message}",
    "retry.streamed": "失败的尝试已输出：",
    "turn.failed": "本轮失败",
    "turn.maxTokens": "已达到输出 token 上限",
    "turn.maxTokensHint": "模型在输出 token 上限处停止。",
    "window.earlier": "显示更早的行",
    "window.loading": "正在载入更多…",
    "search.placeholder": "在本会话中搜索（/）",
    "search.kind": "行类型",
    "search.form": "上下文形式",
    "search.tool": "工具",
    "search.errors": "仅错误",
    "search.any": "全部",
    "search.count": "第 {n} 个，共 {m} 个",
    "search.none": "没有匹配",
    "search.next": "下一个（j）",
    "search.previous": "上一个（k）",
    "session.parent": "父会话",
    "session.children": "子会话",
    "session.tokens": "Token",
    "event.synthetic": "不在文件中：dsh 载入此日志时会补上的崩溃收尾事件。",
    "list.empty": "没有已载入的会话。",
    "list.refused": "不是会话日志",
}


@dataclass(frozen=True, slots=True)
class Strings:
    lang: str
    table: dict[str, str]

    def __call__(self, key: str, **params: object) -> str:
        text = self.table.get(key, key)
        return interpolate(text, params) if params else text


def _ranges(header: str) -> list[tuple[float, str]]:
    out = []
    for i, part in enumerate(header.split(",")):
        lang, _, params = part.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if lang:
            out.append((q - i * 1e-6, lang.lower()))
    return sorted(out, reverse=True)


def strings_for(accept_language: str | None) -> Strings:
    for _, lang in _ranges(accept_language or ""):
        if lang.startswith("zh"):
            return Strings("zh", ZH)
        if lang.startswith("en") or lang == "*":
            return Strings("en", EN)
    return Strings("en", EN)
