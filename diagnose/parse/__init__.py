"""What the log says: input streams, masking hand-off, launcher prefixes, events, roles and timestamps.

``reader.LogReader`` streams sources through the redactor and the line scanner into a ``ParsedLog``.
This stage never imports the engine: the encyclopedia's signatures reach it as a ``SignatureMatcher``.
"""
