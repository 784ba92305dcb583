"""Reading `journalctl -o json` entries."""


def field(entry, name):
    """All values of a journal field as strings (repeated fields are lists; binary ones byte lists)."""
    value = entry.get(name)
    if value is None:
        return []
    if isinstance(value, list) and value and all(isinstance(item, int) for item in value):
        return [bytes(value).decode("utf-8", "replace")]
    if not isinstance(value, list):
        value = [value]
    out = []
    for item in value:
        if isinstance(item, list):
            out.append(bytes(item).decode("utf-8", "replace"))
        elif item is not None:
            out.append(str(item))
    return out


def first(entry, name):
    values = field(entry, name)
    return values[0] if values else None


def key_values(values):
    result = {}
    for item in values:
        key, _, value = item.partition("=")
        result[key] = value
    return result
