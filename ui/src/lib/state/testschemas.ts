// JSON schemas as pydantic 2.13 writes them (`TypeAdapter(...).json_schema()`), for the tests:
// the per-call `response_schema` HumanInTheLoopMiddleware publishes for a tool allowing every
// decision (its `edit` branch pinned to the tool, with the tool's argument model), and a tool
// argument model with a Literal, an Optional and a list.
import type { Json } from "./json";

export const WEATHER_DECISION: Json = {
  $defs: {
    ApproveDecision: { properties: { type: { const: "approve", title: "Type", type: "string" } }, required: ["type"], title: "ApproveDecision", type: "object" },
    Args: {
      properties: { city: { title: "City", type: "string" }, days: { default: 1, title: "Days", type: "integer" } },
      required: ["city"],
      title: "Args",
      type: "object",
    },
    EditDecision: {
      properties: { type: { const: "edit", title: "Type", type: "string" }, edited_action: { $ref: "#/$defs/EditedAction" } },
      required: ["type", "edited_action"],
      title: "EditDecision",
      type: "object",
    },
    EditedAction: {
      properties: { name: { const: "get_weather", title: "Name", type: "string" }, args: { $ref: "#/$defs/Args" } },
      required: ["name", "args"],
      title: "EditedAction",
      type: "object",
    },
    RejectDecision: {
      properties: { type: { const: "reject", title: "Type", type: "string" }, message: { title: "Message", type: "string" } },
      required: ["type"],
      title: "RejectDecision",
      type: "object",
    },
    RespondDecision: {
      properties: { type: { const: "respond", title: "Type", type: "string" }, message: { title: "Message", type: "string" } },
      required: ["type", "message"],
      title: "RespondDecision",
      type: "object",
    },
  },
  discriminator: {
    mapping: {
      approve: "#/$defs/ApproveDecision",
      edit: "#/$defs/EditDecision",
      reject: "#/$defs/RejectDecision",
      respond: "#/$defs/RespondDecision",
    },
    propertyName: "type",
  },
  oneOf: [{ $ref: "#/$defs/ApproveDecision" }, { $ref: "#/$defs/EditDecision" }, { $ref: "#/$defs/RejectDecision" }, { $ref: "#/$defs/RespondDecision" }],
};

/** A one-decision tool's schema: that decision's plain object. */
export const REJECT_ONLY: Json = {
  properties: { type: { const: "reject", title: "Type", type: "string" }, message: { title: "Message", type: "string" } },
  required: ["type"],
  title: "RejectDecision",
  type: "object",
};

export const FORECAST_ARGS: Json = {
  properties: {
    city: { title: "City", type: "string" },
    unit: { default: "C", enum: ["C", "F"], title: "Unit", type: "string" },
    note: { anyOf: [{ type: "string" }, { type: "null" }], default: null, title: "Note" },
    days: { default: [], items: { type: "integer" }, title: "Days", type: "array" },
  },
  required: ["city"],
  title: "Args",
  type: "object",
};
