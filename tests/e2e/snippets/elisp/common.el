;;; common.el --- helpers for the batch Emacs scenarios  -*- lexical-binding: t; -*-

;; A scenario reads its parameters from the JSON file $QODEASSIST_EMACS_PARAMS, runs its steps
;; with `qa-run', records what it saw with `qa-record', and leaves a JSON report in
;; (plist-get qa-params :result): {"ok": bool, "failure": str, "steps": [...], ...}.

(require 'cl-lib)
(require 'json)
(require 'backtrace)

;; The unpacked Emacs cannot spawn native-compiler subprocesses: stay on byte code.
(setq native-comp-jit-compilation nil
      native-comp-enable-subr-trampolines nil
      load-prefer-newer t
      make-backup-files nil
      create-lockfiles nil
      auto-save-default nil
      inhibit-message nil)

(defvar qa-params
  (json-parse-string
   (with-temp-buffer
     (insert-file-contents (getenv "QODEASSIST_EMACS_PARAMS"))
     (buffer-string))
   :object-type 'plist :array-type 'list :null-object nil :false-object nil)
  "The scenario's parameters.")

(defvar qa-report (list :ok :json-false :steps []) "The report being built.")
(defvar qa-started (float-time) "When the scenario started.")
(defvar qa-diagnostics-function nil
  "A function returning extra text for the report when the scenario fails (logs, buffers).")

(defun qa-buffers-report (regexp)
  "The end of every buffer whose name matches REGEXP (logs, events, stderr), as one text."
  (mapconcat
   (lambda (buffer)
     (with-current-buffer buffer
       (format "==== %s\n%s\n" (buffer-name)
               (let ((text (buffer-string)))
                 (substring text (max 0 (- (length text) 6000)))))))
   (cl-remove-if-not (lambda (b) (string-match-p regexp (buffer-name b))) (buffer-list))
   ""))

(defun qa-report-buffers (regexp)
  "Put the buffers whose names match REGEXP in the report when the scenario fails."
  (setq qa-diagnostics-function (lambda () (qa-buffers-report regexp))))

(defun qa-chat-text ()
  "The chat buffer's text."
  (with-current-buffer qodeassist-chat-buffer-name
    (buffer-substring-no-properties (point-min) (point-max))))

(defun qa-param (key) "Parameter KEY." (plist-get qa-params key))

(defun qa-record (key value)
  "Record VALUE under KEY in the report."
  (setq qa-report (plist-put qa-report key value)))

(defun qa-step (name)
  "Note that step NAME started (the last one names where a failure happened)."
  (message "[qa %.2fs] %s" (- (float-time) qa-started) name)
  (qa-record :steps (vconcat (plist-get qa-report :steps) (list name))))

(defun qa-fail (format-string &rest args)
  "Fail the scenario with a message made from FORMAT-STRING and ARGS."
  (signal 'error (list (apply #'format format-string args))))

(defun qa-check (condition what &rest args)
  "Fail with WHAT (a format string with ARGS) unless CONDITION."
  (unless condition (apply #'qa-fail what args))
  condition)

(defun qa-wait (predicate timeout what)
  "Process events until PREDICATE returns non-nil (its value) or TIMEOUT seconds; fail with WHAT."
  (let ((deadline (+ (float-time) timeout)) value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value (qa-fail "timed out after %ss waiting for %s" timeout what))))

;; `eglot-shutdown' gives the server 1.5 s to answer `shutdown' (then fails with "Timed out")
;; and `jsonrpc-shutdown' 0.1 s to exit (then kills it): time limits a busy machine misses.
(defun qa-eglot-shutdown (server)
  "Shut Eglot's SERVER down as `eglot-shutdown' does, waiting for its answer and its exit."
  (setf (eglot--shutdown-requested server) t)
  ;; As `eglot--on-shutdown' does: the file watchers the server registered (the codebase index
  ;; follows files on disk) are removed first; left in place, the exit was never noticed.
  (when (fboundp 'eglot--file-watches)
    (maphash (lambda (_id watches) (mapc #'file-notify-rm-watch watches))
             (eglot--file-watches server))
    (clrhash (eglot--file-watches server)))
  (jsonrpc-request server :shutdown nil :timeout 60)
  (jsonrpc-notify server :exit nil)
  (let ((process (jsonrpc--process server)))
    (qa-wait (lambda () (process-get process 'jsonrpc-sentinel-cleanup-started))
             60 "the server to exit after `exit'"))
  (jsonrpc-shutdown server t)
  (kill-buffer (jsonrpc-events-buffer server)))

(defun qa-write-report ()
  "Write the report file."
  (qa-record :elapsed (- (float-time) qa-started))
  (with-temp-file (qa-param :result)
    (insert (json-encode qa-report))))

(defun qa-run (body)
  "Run BODY (a function), write the report and leave Emacs with its outcome."
  ;; Make the unpacked ELPA packages available as package.el would: path and autoloads.
  (dolist (dir (qa-param :packages))
    (add-to-list 'load-path dir)
    (dolist (autoloads (directory-files dir t "-autoloads\\.el\\'"))
      (load autoloads nil t)))
  (run-at-time (qa-param :deadline) nil
               (lambda ()
                 (qa-record :failure "scenario deadline passed")
                 (qa-write-report)
                 (kill-emacs 3)))
  (condition-case err
      (progn
        (handler-bind ((error (lambda (_)
                                (let* ((print-length 4) (print-level 3)
                                       (trace (backtrace-to-string)))
                                  (qa-record :backtrace
                                             (substring trace 0 (min 4000 (length trace))))))))
          (funcall body))
        (qa-record :ok t))
    (error
     (qa-record :failure (error-message-string err))
     (message "[qa] FAILED: %s" (error-message-string err))
     (when qa-diagnostics-function
       (qa-record :diagnostics
                  (condition-case nil (funcall qa-diagnostics-function) (error "?"))))))
  (qa-write-report)
  (kill-emacs (if (eq (plist-get qa-report :ok) t) 0 1)))

(defun qa-visit (name text)
  "Visit a new file NAME in the project holding TEXT; return its buffer."
  (let ((file (expand-file-name name (qa-param :project))))
    (with-temp-file file (insert text))
    (find-file-noselect file)))

(defun qa-goto (line column)
  "Go to 0-based LINE and COLUMN."
  (goto-char (point-min))
  (forward-line line)
  (move-to-column column))

(defun qa-line-text (line)
  "The text of 0-based LINE."
  (save-excursion
    (qa-goto line 0)
    (buffer-substring-no-properties (line-beginning-position) (line-end-position))))

(provide 'qa-common)
;;; common.el ends here
