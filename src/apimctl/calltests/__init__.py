"""Call tests: declarative expectations on what callers of the endpoints see.

A test file (YAML, ``*.test.yaml``; schema ``schemas/calltests.schema.json``) declares
consumers (member, application and key on a plan), stub back ends and calls with their
expectations. ``model`` reads and checks a file (every problem with file:line:col),
``backends`` answers the back-end calls, ``timing`` holds the virtual clock, ``runner``
creates the consumers through the management API and makes the calls against a traffic
listener, ``report`` renders the results (text, JSON, JUnit XML, Markdown). Nothing here
imports the server: the CLI hands the runner its clients (an embedded emulator, or
``--url`` and ``--traffic-url``).
"""
