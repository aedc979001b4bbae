"""Infrastructure: what the core runs on, apart from what it does. Threads (:mod:`.service`, :mod:`.worker`),
processes (:mod:`.procs`), the home folder and its secret files (:mod:`.homedir`, :mod:`.keyfile`), logging
(:mod:`.logfile`), memory (:mod:`.heap`, :mod:`.memo`), the ML stack's import lock (:mod:`.mlimport`), the packaged
base models (:mod:`.modelspecs`) and percentiles (:mod:`.stats`). It imports nothing else of the core, so every
layer may use it."""
