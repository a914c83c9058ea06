;;; qodeassist-chat.el --- The QodeAssist chat buffer  -*- lexical-binding: t; -*-

;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, convenience

;;; Commentary:

;; The *qodeassist-chat* buffer that qodeassist-eglot.el and qodeassist-lsp-mode.el write the
;; server's `qodeassist/chat/event' notifications into (you do not load this file yourself):
;;
;; - answer text as it streams, then "[finished: REASON]", "[failed: …]" or "[cancelled]";
;; - a tool call as "[tool NAME (PERMISSION) ARGUMENTS]", its result as "[✓ NAME: SUMMARY]" (or
;;   ✗ for an error);
;; - a file edit the model proposes as a block: "📝 Edit FILE: STATUS (keys)" over the unified
;;   diff.  A later status of the same edit (applied, undone, …) rewrites that header.  An edit
;;   that would leave the file unparsable (its `parseCheck' is "broken") has a line
;;   "⚠ This edit breaks the file: WHY" under the header.
;;
;; With point on an edit block: a applies it, r rejects it, u undoes it (the client sends
;; `qodeassist/chat/editFile'; the server changes the file through `workspace/applyEdit').
;; Applying an edit that breaks the file asks again (`yes-or-no-p') first.
;; While an answer runs, sending another message is refused with a message saying how to stop
;; the answer (the server would refuse it too: ChatBusy).
;; Permission questions of the tools ("Allow once" / "Allow for this chat" / "Deny") arrive as
;; `window/showMessageRequest', which Eglot and lsp-mode ask with `completing-read'.  The
;; `diagnostics' tool asks the editor with `qodeassist/diagnostics';
;; `qodeassist-chat-diagnostics-answer' builds the answer from the diagnostics the client
;; collects (Flymake's with Eglot, lsp-mode's own).

;;; Code:

(require 'cl-lib)
(require 'diff-mode)
(require 'flymake)
(require 'json)
(require 'url-util)

(defvar qodeassist-chat-buffer-name "*qodeassist-chat*"
  "Name of the chat buffer.")

(defvar qodeassist-chat-edit-function nil
  "Function (EDIT-ID ACTION CALLBACK) sending `qodeassist/chat/editFile'.
Set by the client file.  CALLBACK gets the answer's STATUS and MESSAGE.")

(defvar qodeassist-chat--busy nil
  "Non-nil from sending a message until its answer's terminal event.
The server refuses a second message into a chat that is answering (ChatBusy).")

(defun qodeassist-chat-begin-send (cancel-key)
  "Mark the chat as answering, or refuse while it still is.
CANCEL-KEY names the command that stops the answer, for the message."
  (when qodeassist-chat--busy
    (user-error "QodeAssist: the chat is still answering; stop it first (%s), then send again"
                cancel-key))
  (setq qodeassist-chat--busy t))

(defun qodeassist-chat-idle ()
  "The chat is not answering (its message was not accepted, or a new chat starts)."
  (setq qodeassist-chat--busy nil))

(defvar qodeassist-chat--edits (make-hash-table :test #'equal)
  "Edit id → (MARKER . FIELDS): its header line's start and last fields.")

(defvar qodeassist-chat-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "a") #'qodeassist-chat-edit-apply)
    (define-key map (kbd "r") #'qodeassist-chat-edit-reject)
    (define-key map (kbd "u") #'qodeassist-chat-edit-undo)
    map)
  "Keys of the chat buffer.")

(define-derived-mode qodeassist-chat-mode special-mode "QA-Chat"
  "The QodeAssist chat: answers, tool calls and file edits.
On a file edit block, \\[qodeassist-chat-edit-apply] applies it,
\\[qodeassist-chat-edit-reject] rejects it and \\[qodeassist-chat-edit-undo] undoes it.")

(defun qodeassist-chat-buffer ()
  "The chat buffer (created in `qodeassist-chat-mode' when needed)."
  (or (get-buffer qodeassist-chat-buffer-name)
      (with-current-buffer (get-buffer-create qodeassist-chat-buffer-name)
        (qodeassist-chat-mode)
        (clrhash qodeassist-chat--edits)
        (current-buffer))))

(defun qodeassist-chat-insert (&rest strings)
  "Append STRINGS to the chat buffer."
  (with-current-buffer (qodeassist-chat-buffer)
    (let ((inhibit-read-only t))
      (save-excursion
        (goto-char (point-max))
        (apply #'insert strings)))))

(defun qodeassist-chat--json (value)
  "VALUE (a plist, hash table or string) as one line of JSON."
  (if (stringp value) value (let ((json-encoding-pretty-print nil)) (json-encode value))))

(defun qodeassist-chat--path (uri)
  "The file of URI for people, relative to `default-directory'."
  (let ((file (if (string-prefix-p "file://" uri)
                  (qodeassist-chat--uri-file uri)
                uri)))
    (if (file-name-absolute-p file) (file-relative-name file) file)))

;;;; The `diagnostics' tool: `qodeassist/diagnostics'

(defun qodeassist-chat--uri-file (uri)
  "The absolute file name of the file URI."
  (url-unhex-string (replace-regexp-in-string "\\`file://[^/]*" "" uri)))

(defun qodeassist-chat--lsp-position (pos)
  "POS of this buffer as an LSP Position (columns counted in characters)."
  (save-excursion
    (goto-char pos)
    (list :line (1- (line-number-at-pos)) :character (- pos (line-beginning-position)))))

(defun qodeassist-chat-flymake-diagnostics ()
  "This buffer's Flymake diagnostics as LSP Diagnostic plists."
  (when (bound-and-true-p flymake-mode)
    (mapcar (lambda (diagnostic)
              (let ((type (symbol-name (flymake-diagnostic-type diagnostic))))
                (list :range (list :start (qodeassist-chat--lsp-position
                                           (flymake-diagnostic-beg diagnostic))
                                   :end (qodeassist-chat--lsp-position
                                         (flymake-diagnostic-end diagnostic)))
                      :severity (cond ((string-match-p "error" type) 1)
                                      ((string-match-p "warning" type) 2)
                                      (t 3))
                      :message (flymake-diagnostic-text diagnostic)
                      :source (format "%s" (flymake-diagnostic-backend diagnostic)))))
            (flymake-diagnostics))))

(defun qodeassist-chat-diagnostics-answer (uri collect uri-of)
  "The answer to `qodeassist/diagnostics' for the file URI (nil: all file buffers).
COLLECT returns the LSP Diagnostic objects of the current buffer and URI-OF its
URI.  A file that no buffer visits has none: nothing here runs its checkers."
  (let (items)
    (dolist (buffer (if uri
                        (let ((visiting (find-buffer-visiting (qodeassist-chat--uri-file uri))))
                          (and visiting (list visiting)))
                      (buffer-list)))
      (with-current-buffer buffer
        (when buffer-file-name
          (let ((found (funcall collect)))
            (when (or uri found)
              (push (list :uri (or uri (funcall uri-of)) :diagnostics (vconcat found))
                    items))))))
    (list :items (vconcat (nreverse items)))))

(defun qodeassist-chat--breaks-file (fields)
  "Whether the edit with FIELDS leaves its file unparsable (`parseCheck' \"broken\")."
  (equal (plist-get fields :parse-check) "broken"))

(defun qodeassist-chat--break-reason (fields)
  "Why the edit with FIELDS breaks its file, for people."
  (let ((reason (plist-get fields :parse-reason)))
    (if (and (stringp reason) (not (string-empty-p reason)))
        (replace-regexp-in-string "\n" " " reason)
      "it parses worse after the edit than before")))

(defun qodeassist-chat--edit-header (fields)
  "The header of an edit with FIELDS.
FIELDS has :uri :status :message :parse-check :parse-reason.  The header
is one line, and a warning line under it when the edit breaks the file."
  (let ((status (plist-get fields :status))
        (message (plist-get fields :message)))
    (concat
     (format "📝 Edit %s: %s%s%s\n"
             (qodeassist-chat--path (or (plist-get fields :uri) "?"))
             status
             (if (and message (not (string-empty-p message))) (concat " — " message) "")
             (pcase status
               ((or "pending" "failed") " (a: apply, r: reject)")
               ("applied" " (u: undo)")
               (_ "")))
     (if (qodeassist-chat--breaks-file fields)
         (propertize (format "⚠ This edit breaks the file: %s\n"
                             (qodeassist-chat--break-reason fields))
                     'font-lock-face 'warning)
       ""))))

(defun qodeassist-chat--show-edit (id fields)
  "Show edit ID with FIELDS (:uri :diff :status :message).
A new edit gets a block; a known one a new header line."
  (let ((known (gethash id qodeassist-chat--edits)))
    (with-current-buffer (qodeassist-chat-buffer)
      (let ((inhibit-read-only t))
        (save-excursion
          (if known
              (let ((merged (append fields (cdr known))))
                (goto-char (car known))
                (delete-region (point)
                               (+ (point) (length (qodeassist-chat--edit-header (cdr known)))))
                (insert (propertize (qodeassist-chat--edit-header merged)
                                    'qodeassist-edit-id id))
                (setcdr known merged))
            (goto-char (point-max))
            (unless (bolp) (insert "\n"))
            (let ((start (point-marker))
                  (diff (or (plist-get fields :diff) "")))
              (insert (qodeassist-chat--edit-header fields))
              (dolist (line (split-string (string-trim-right diff "\n") "\n" t))
                (insert (propertize (concat line "\n") 'font-lock-face
                                    (pcase (string-to-char line)
                                      (?+ 'diff-added) (?- 'diff-removed) (?@ 'diff-hunk-header)
                                      (_ 'default)))))
              (put-text-property start (point) 'qodeassist-edit-id id)
              (puthash id (cons start fields) qodeassist-chat--edits))))))))

(defun qodeassist-chat-show-event (get)
  "Show one `qodeassist/chat/event'.
\(GET KEY...) returns its field KEY, or a nested one: (GET :error :message)."
  (pcase (funcall get :kind)
    ("text" (qodeassist-chat-insert (or (funcall get :text) "")))
    ("agentChosen"
     (qodeassist-chat-insert
      (format "[agent: %s — %s]\n" (funcall get :agent) (or (funcall get :reason) ""))))
    ("toolCall"
     (qodeassist-chat-insert
      (format "\n[tool %s%s %s]\n" (funcall get :name)
              (let ((permission (funcall get :permission)))
                (if (and permission (not (string-empty-p permission)))
                    (format " (%s)" permission)
                  ""))
              (qodeassist-chat--json (or (funcall get :arguments) "")))))
    ("toolResult"
     (qodeassist-chat-insert
      (format "[%s %s: %s]\n"
              (if (or (eq (funcall get :ok) :json-false) (eq (funcall get :isError) t)) "✗" "✓")
              (funcall get :name)
              (or (funcall get :summary) ""))))
    ("fileEdit"
     (qodeassist-chat--show-edit
      (funcall get :editId)
      (list :uri (or (funcall get :uri) (funcall get :filePath))
            :diff (funcall get :diff)
            :status (funcall get :status)
            :message (funcall get :statusMessage)
            :parse-check (funcall get :parseCheck)
            :parse-reason (funcall get :parseReason))))
    ("finished"
     (setq qodeassist-chat--busy nil)
     (qodeassist-chat-insert (format "\n[finished: %s]\n" (funcall get :stopReason))))
    ("failed"
     (setq qodeassist-chat--busy nil)
     (qodeassist-chat-insert (format "\n[failed: %s]\n" (funcall get :error :message))))
    ("cancelled"
     (setq qodeassist-chat--busy nil)
     (qodeassist-chat-insert "\n[cancelled]\n"))))

(defun qodeassist-chat--edit-at-point ()
  "The id of the edit block at point, or an error saying there is none."
  (or (get-text-property (point) 'qodeassist-edit-id)
      (user-error "No file edit here: move point onto an edit block")))

(defun qodeassist-chat-edit (action)
  "Send ACTION (\"apply\", \"reject\" or \"undo\") for the edit at point.
Applying an edit that breaks its file asks again first."
  (let* ((id (qodeassist-chat--edit-at-point))
         (fields (cdr (gethash id qodeassist-chat--edits))))
    (unless qodeassist-chat-edit-function
      (user-error "QodeAssist: no server to send the edit to"))
    (if (and (equal action "apply") (qodeassist-chat--breaks-file fields)
             (not (yes-or-no-p
                   (format "QodeAssist: this edit breaks %s (%s). Apply it anyway? "
                           (qodeassist-chat--path (or (plist-get fields :uri) "?"))
                           (qodeassist-chat--break-reason fields)))))
        (message "QodeAssist: the edit was not applied")
      (funcall qodeassist-chat-edit-function id action
               (lambda (status message)
                 (when status
                   (qodeassist-chat--show-edit id (list :status status :message message))))))))

(defun qodeassist-chat-edit-apply ()
  "Apply the file edit at point."
  (interactive)
  (qodeassist-chat-edit "apply"))

(defun qodeassist-chat-edit-reject ()
  "Reject the file edit at point."
  (interactive)
  (qodeassist-chat-edit "reject"))

(defun qodeassist-chat-edit-undo ()
  "Undo the applied file edit at point."
  (interactive)
  (qodeassist-chat-edit "undo"))

(provide 'qodeassist-chat)
;;; qodeassist-chat.el ends here
