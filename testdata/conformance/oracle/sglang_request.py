"""SGLang 0.5.23's request model, the rules both Python references of its counting share
(scripts/serverprofile-ref.py, sglang_ref.py beside this file), written from its protocol.py
independently of islkit's Go code. Standard library only."""

EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "ultra", "max")


class InvalidEffort(ValueError):
    pass


def reasoning_kwargs(body):
    """ChatCompletionRequest.normalize_reasoning_inputs: a "reasoning" object's effort (or
    reasoning_effort) replaces reasoning_effort, a number (or a string float() reads) as a float;
    its enabled (or enable) turns thinking on; an effort then decides it, off for "none". Returns
    the chat_template_kwargs defaults: reasoning_effort, thinking and enable_thinking."""
    effort, thinking = body.get("reasoning_effort"), None
    r = body.get("reasoning")
    if isinstance(r, dict):
        e = r.get("effort") if r.get("effort") is not None else r.get("reasoning_effort")
        if isinstance(e, str) and e in EFFORTS:
            effort = e
        elif isinstance(e, (int, float)) and not isinstance(e, bool):
            effort = float(e)
        elif isinstance(e, str):
            try:
                effort = float(e)
            except ValueError:
                raise InvalidEffort(f"invalid reasoning effort: {e!r}")
        elif e is not None:
            raise InvalidEffort(f"invalid reasoning effort: {e!r}")
        enabled = r.get("enabled") if r.get("enabled") is not None else r.get("enable", False)
        if isinstance(enabled, str):
            enabled = enabled.strip().lower() in {"1", "true", "yes", "y", "on"}
        if enabled:
            thinking = True
    kw = {}
    if effort is not None:
        kw["reasoning_effort"] = effort
        thinking = effort != "none"
    if thinking is not None:
        kw["thinking"] = kw["enable_thinking"] = thinking
    return kw


def tool_dump(tool):
    """Tool.model_dump(): type, function, defer_loading; the function as Function's serializer
    writes it: description, name, parameters, strict, defer_loading in the client's key order, the
    fields it left out after, strict and defer_loading dropped when None, the tool's defer_loading
    copied onto a function without one."""
    f = tool["function"]
    fn = {"description": f.get("description"), "name": f["name"], "parameters": f.get("parameters"),
          "strict": f.get("strict"),
          "defer_loading": f.get("defer_loading") if f.get("defer_loading") is not None else tool.get("defer_loading")}
    for k in ("strict", "defer_loading"):
        if fn[k] is None:
            del fn[k]
    order = [k for k in f if k in fn]
    fn = {k: fn[k] for k in order + [k for k in fn if k not in order]}
    return {"type": tool.get("type", "function"), "function": fn, "defer_loading": tool.get("defer_loading")}
