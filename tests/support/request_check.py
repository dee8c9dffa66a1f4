"""Each target's own request types checking a translated request (the SDKs' typed dicts, pydantic
models and the providers' documented rules)."""

from __future__ import annotations

from typing import Any, get_type_hints

import pytest


def _typed_dict_keys(tp: Any) -> set[str]:
    return set(get_type_hints(tp, include_extras=False)) if hasattr(tp, "__annotations__") else set()


def _valid(target: str, body: dict[str, Any]) -> None:
    """The target SDK's request type takes ``body``, and it has no key outside that type."""
    import pydantic

    if target == "gemini":
        types = pytest.importorskip("google.genai.types")

        assert set(body) <= {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}
        for content in body["contents"]:
            types.Content.model_validate(content)
        if "systemInstruction" in body:
            types.Content.model_validate(body["systemInstruction"])
        for tool in body.get("tools", []):
            types.Tool.model_validate(tool)
        if "toolConfig" in body:
            types.ToolConfig.model_validate(body["toolConfig"])
        if "generationConfig" in body:
            types.GenerationConfig.model_validate(body["generationConfig"])
        return
    if target == "converse":
        _valid_converse(body)
        return
    if target == "chat":
        from openai.types.chat.completion_create_params import (
            CompletionCreateParamsStreaming as T,
        )
    elif target == "responses":
        from openai.types.responses.response_create_params import (
            ResponseCreateParamsStreaming as T,
        )
    else:
        from anthropic.types.message_create_params import (
            MessageCreateParamsStreaming as T,
        )
    assert set(body) <= _typed_dict_keys(T), set(body) - _typed_dict_keys(T)
    pydantic.TypeAdapter(T).validate_python(body)
    assert body["stream"] is True


def _valid_converse(body: dict[str, Any]) -> None:
    """botocore's own validator takes ``body`` as the parameters of ``converse_stream`` (the
    model id added, as boto3 sends it in the path)."""
    botocore_session = pytest.importorskip("botocore.session")
    from botocore.validate import ParamValidator

    model = botocore_session.get_session().get_service_model("bedrock-runtime")
    shape = model.operation_model("ConverseStream").input_shape
    report = ParamValidator().validate({"modelId": "m", **body}, shape)
    assert not report.has_errors(), report.generate_report()
