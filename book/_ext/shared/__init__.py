"""Helpers that more than one extension needs (tools/pdfbook too), each written once here.
Nothing here connects to an event; these modules are not extensions.
"""
