;;; qodeassist-lsp-mode.el --- QodeAssist (qodeassist-lsp) through lsp-mode  -*- lexical-binding: t; -*-

;; Package-Requires: ((emacs "28.1") (lsp-mode "9.0"))
;; Keywords: tools, convenience, languages

;;; Commentary:

;; Registers the qodeassist-lsp language server with lsp-mode as an add-on client, so it runs
;; beside your usual server (pyright, rust-analyzer, clangd, ...):
;;
;;   (add-to-list 'load-path "/path/to/qodeassist-lsp/editors/emacs")
;;   (with-eval-after-load 'lsp-mode (require 'qodeassist-lsp-mode))
;;   (add-hook 'python-mode-hook #'lsp-deferred)
;;
;; What you get:
;; - inline completion (ghost text) with lsp-mode 10+: `lsp-inline-completion-mode' turns on by
;;   itself for this server; suggestions appear after `lsp-inline-completion-idle-delay' seconds
;;   of idleness, or on demand with `lsp-inline-completion-display' (C-c q TAB).  While one is
;;   shown: C-<return> accepts, C-n / C-p cycle, C-g cancels;
;; - completion: the suggestion is also one candidate of `completion-at-point' (Company/Corfu);
;; - quick refactor: `qodeassist-lsp-refactor' (C-c q r) on a region offers the instruction
;;   library; `qodeassist-lsp-refactor-with-instruction' (C-c q i) asks for your own words;
;; - chat: `qodeassist-lsp-chat' (C-c q c) streams the answer into *qodeassist-chat*, with
;;   tool calls and file edits (a diff block: a applies, r rejects, u undoes it there); tool
;;   permission questions are asked with `completing-read' (qodeassist-chat.el);
;; - status: `qodeassist-lsp-status' (C-c q s) and a mode-line lighter fed by the
;;   `qodeassist/status' notification;
;; - a caret hint: after `qodeassist-lsp-cursor-idle-delay' idle seconds the server is told
;;   where point rests, and a model on this machine reads the completion request there ahead;
;; - the chat's `diagnostics' tool sees what lsp-mode's servers report for the open files;
;; - next-edit suggestions: `qodeassist-next-edit-mode' (qodeassist-next-edit.el) in these
;;   buffers, asked for at once when ghost text is accepted.

;;; Code:

(require 'cl-lib)
(require 'lsp-mode)
(require 'lsp-inline-completion nil t)   ; lsp-mode 10+
;; Beside this file: found also when only this file is loaded by name.
(require 'qodeassist-chat
         (expand-file-name "qodeassist-chat" (file-name-directory (macroexp-file-name))))

(defgroup qodeassist-lsp nil
  "QodeAssist LLM completion, refactor and chat through qodeassist-lsp and lsp-mode."
  :group 'lsp-mode
  :prefix "qodeassist-lsp-")

(defcustom qodeassist-lsp-command '("qodeassist-lsp")
  "Command line that starts the server (program and arguments)."
  :type '(repeat string))

(defcustom qodeassist-lsp-modes '(prog-mode)
  "QodeAssist attaches to buffers whose major mode derives from one of these."
  :type '(repeat symbol))

(defun qodeassist-lsp--flatten (plist prefix)
  "Dotted lsp-mode settings (PATH VALUE [BOOLEAN]) for PLIST under PREFIX."
  (cl-loop for (key value) on plist by #'cddr
           for path = (concat prefix "." (substring (symbol-name key) 1))
           append (cond ((and (consp value) (keywordp (car value)))
                         (qodeassist-lsp--flatten value path))
                        ((memq value '(t :json-false))
                         (list (list path (eq value t) t)))
                        (t (list (list path value))))))

(defun qodeassist-lsp--set-settings (symbol value)
  "Set SYMBOL to VALUE and serve it from `workspace/configuration' too."
  (set-default symbol value)
  (lsp-register-custom-settings (qodeassist-lsp--flatten value "qodeassist")))

(defcustom qodeassist-lsp-settings
  '(:completion (:linesBefore 80 :linesAfter 40 :multiLine "smart")
    :refactor (:linesBefore 80 :linesAfter 40))
  "The sections of settings.toml as a plist (camelCase or snake_case keys).
Sent as `initializationOptions' and as the answer to the server's
`workspace/configuration' request for the section \"qodeassist\".
lsp-mode answers that request from registered settings only (an empty
object otherwise, which would replace the initialization options), so
they are registered here."
  :type 'sexp
  :set #'qodeassist-lsp--set-settings)

;;;; Status

(defvar qodeassist-lsp-status nil
  "The last `qodeassist/status' the server sent.
A hash table, or a plist with `lsp-use-plists'.")

(defun qodeassist-lsp--lighter ()
  "Mode-line text for the last status."
  (when qodeassist-lsp-status
    (format " QA[%s]" (lsp-get qodeassist-lsp-status :state))))

(add-to-list 'mode-line-misc-info '(:eval (qodeassist-lsp--lighter)) t)

(defun qodeassist-lsp--on-status (_workspace status)
  "Remember the STATUS the server sends after every configuration reload."
  (setq qodeassist-lsp-status status)
  (force-mode-line-update t))

(defun qodeassist-lsp-status ()
  "Ask the server for its status and show a one-line summary."
  (interactive)
  (let* ((status (lsp-request "qodeassist/status" (make-hash-table)))
         (problems (lsp-get status :problems)))
    (setq qodeassist-lsp-status status)
    (message "QodeAssist %s: %s agents, %s error(s), %s warning(s)"
             (lsp-get status :state) (lsp-get status :agents)
             (lsp-get problems :errors) (lsp-get problems :warnings))
    status))

;;;; Caret hint

(defcustom qodeassist-lsp-cursor-idle-delay 0.5
  "Idle seconds after which the server is told where point rests, or nil.
With that hint (`qodeassist/didMoveCursor') the server reads the
completion request there into a local model's prompt cache, so the
first suggestion at that place answers sooner."
  :type '(choice (const :tag "Never" nil) number)
  :set (lambda (symbol value)
         (set-default symbol value)
         (when (fboundp 'qodeassist-lsp--start-cursor-timer)
           (qodeassist-lsp--start-cursor-timer))))

(defvar qodeassist-lsp--cursor-timer nil
  "The idle timer that runs `qodeassist-lsp--tell-cursor'.")

(defvar-local qodeassist-lsp--cursor-told nil
  "The (TICK . POINT) of this buffer last told to the server.")

(defun qodeassist-lsp--tell-cursor ()
  "Tell this buffer's qodeassist-lsp server where point rests, once per place.
Return non-nil when a notification was sent."
  (when-let* (((bound-and-true-p lsp-mode))
              (file (buffer-file-name))
              (workspace (lsp-find-workspace 'qodeassist file)))
    (let ((place (cons (buffer-chars-modified-tick) (point))))
      (unless (equal place qodeassist-lsp--cursor-told)
        (setq qodeassist-lsp--cursor-told place)
        ;; Only to this server: the others in the buffer do not know the method.
        (with-lsp-workspace workspace
          (lsp-notify "qodeassist/didMoveCursor"
                      (list :textDocument (lsp--text-document-identifier)
                            :position (lsp--cur-position))))
        t))))

(defun qodeassist-lsp--start-cursor-timer ()
  "(Re)start the caret hint's idle timer from its delay setting."
  (when qodeassist-lsp--cursor-timer (cancel-timer qodeassist-lsp--cursor-timer))
  (setq qodeassist-lsp--cursor-timer
        (and qodeassist-lsp-cursor-idle-delay
             (run-with-idle-timer qodeassist-lsp-cursor-idle-delay t
                                  #'qodeassist-lsp--tell-cursor))))

(qodeassist-lsp--start-cursor-timer)

;;;; Quick refactor

(defun qodeassist-lsp-refactor ()
  "Pick a QodeAssist refactor (instruction library) for the region and apply it."
  (interactive)
  (lsp-execute-code-action-by-kind "refactor.rewrite"))

(defun qodeassist-lsp-refactor-with-instruction (beg end instruction)
  "Rewrite the region BEG..END following INSTRUCTION (your own words).
The server applies the result with `workspace/applyEdit' as one undo step."
  (interactive
   (append (if (use-region-p)
               (list (region-beginning) (region-end))
             (list (point) (point)))
           (list (read-string "QodeAssist instruction: "))))
  (lsp-request-async
   "workspace/executeCommand"
   (list :command "qodeassist.refactor"
         :arguments (vector
                     (append (list :uri (lsp--buffer-uri)
                                   :range (lsp--region-to-range beg end)
                                   :version lsp--cur-version)
                             (unless (string-empty-p instruction)
                               (list :instruction instruction)))))
   (lambda (result)
     (unless (eq (lsp-get result :applied) t)
       (message "QodeAssist: nothing applied %s" (or (lsp-get result :message) ""))))
   :error-handler (lambda (error)
                    (message "QodeAssist refactor failed: %s" (lsp-get error :message)))
   :mode 'detached))

;;;; Chat (minimal)

(defvar qodeassist-lsp-chat-buffer "*qodeassist-chat*" "Name of the chat buffer.")
(defvar qodeassist-lsp--chat-id nil "The chat the next message continues (nil: a new chat).")
(defvar qodeassist-lsp--chat-workspace nil
  "The workspace (server) of the chat: the edit keys of the chat buffer talk to it.")

(defun qodeassist-lsp--chat-insert (&rest strings)
  "Append STRINGS to the chat buffer."
  (let ((qodeassist-chat-buffer-name qodeassist-lsp-chat-buffer))
    (apply #'qodeassist-chat-insert strings)))

(defun qodeassist-lsp--edit-file (edit-id action callback)
  "Send ACTION for EDIT-ID of the current chat.
CALLBACK gets the answer's status and message."
  (unless qodeassist-lsp--chat-workspace
    (user-error "QodeAssist: no chat server"))
  (with-lsp-workspace qodeassist-lsp--chat-workspace
    (lsp-request-async
     "qodeassist/chat/editFile"
     (list :chatId qodeassist-lsp--chat-id :editId edit-id :action action)
     (lambda (result)
       (funcall callback (lsp-get result :status) (lsp-get result :message)))
     :error-handler (lambda (error)
                      (message "QodeAssist: %s failed: %s" action (lsp-get error :message)))
     :mode 'detached)))

(defun qodeassist-lsp-chat (message)
  "Send MESSAGE to the chat agent.
The answer streams into `qodeassist-lsp-chat-buffer'.  With a prefix
argument, start a new chat."
  (interactive (list (read-string "QodeAssist chat: ")))
  (when current-prefix-arg
    (setq qodeassist-lsp--chat-id nil)
    (qodeassist-chat-idle))
  (qodeassist-chat-begin-send "C-c q k")
  (let ((answer (condition-case err
                    (lsp-request "qodeassist/chat/send"
                                 (append (list :message message)
                                         (when qodeassist-lsp--chat-id
                                           (list :chatId qodeassist-lsp--chat-id))))
                  (error (qodeassist-chat-idle)
                         (signal (car err) (cdr err))))))
    (setq qodeassist-lsp--chat-id (lsp-get answer :chatId)
          qodeassist-lsp--chat-workspace (lsp-find-workspace 'qodeassist nil)
          qodeassist-chat-edit-function #'qodeassist-lsp--edit-file)
    (qodeassist-lsp--chat-insert "\n>>> " message "\n\n")
    (display-buffer qodeassist-lsp-chat-buffer)
    answer))

(defun qodeassist-lsp-chat-cancel ()
  "Stop the answer being written."
  (interactive)
  (when (and qodeassist-lsp--chat-id qodeassist-lsp--chat-workspace)
    (with-lsp-workspace qodeassist-lsp--chat-workspace
      (lsp-request "qodeassist/chat/cancel" (list :chatId qodeassist-lsp--chat-id)))))

(defun qodeassist-lsp--on-chat-event (_workspace event)
  "Show one streamed chat EVENT (of the current chat) in the chat buffer."
  (when (or (null qodeassist-lsp--chat-id)
            (equal (lsp-get event :chatId) qodeassist-lsp--chat-id))
    (let ((qodeassist-chat-buffer-name qodeassist-lsp-chat-buffer))
      (qodeassist-chat-show-event
       (lambda (&rest path)
         (let ((value event))
           (dolist (key path value) (setq value (and value (lsp-get value key))))))))))

(defun qodeassist-lsp--with-show-message (capabilities)
  "CAPABILITIES saying that `window/showMessageRequest' is answered.
lsp-mode asks with `completing-read'; the server asks tool permissions only
of clients that say so."
  (mapcar (lambda (entry)
            (if (and (eq (car-safe entry) 'window) (not (assq 'showMessage (cdr entry))))
                (cons 'window
                      (append (cdr entry)
                              '((showMessage
                                 . ((messageActionItem
                                     . ((additionalPropertiesSupport . :json-false))))))))
              entry))
          capabilities))

(advice-add 'lsp--client-capabilities :filter-return #'qodeassist-lsp--with-show-message)

;;;; The chat's `diagnostics' tool

(defun qodeassist-lsp--diagnostics (_workspace params)
  "Answer `qodeassist/diagnostics': PARAMS has the file's uri, or null for all.
The diagnostics are those of every lsp-mode server of the session (pyright,
clangd, ...), as lsp-mode shows them."
  (let ((table (lsp-diagnostics)))
    (qodeassist-chat-diagnostics-answer
     (lsp-get params :uri)
     (lambda () (gethash (lsp--fix-path-casing buffer-file-name) table))
     (lambda () (lsp--path-to-uri buffer-file-name)))))

;;;; Client

(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection (lambda () qodeassist-lsp-command))
  :activation-fn (lambda (_file mode)
                   (apply #'provided-mode-derived-p mode qodeassist-lsp-modes))
  :add-on? t                            ; beside the language's own server
  :priority -2
  :server-id 'qodeassist
  :initialization-options (lambda () (list :qodeassist qodeassist-lsp-settings))
  :notification-handlers
  (let ((handlers (make-hash-table :test #'equal)))
    (puthash "qodeassist/status" #'qodeassist-lsp--on-status handlers)
    (puthash "qodeassist/chat/event" #'qodeassist-lsp--on-chat-event handlers)
    handlers)
  :request-handlers
  (let ((handlers (make-hash-table :test #'equal)))
    (puthash "qodeassist/diagnostics" #'qodeassist-lsp--diagnostics handlers)
    handlers)))

;;;; Keys

(defvar qodeassist-lsp-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'lsp-inline-completion-display)
    (define-key map (kbd "r") #'qodeassist-lsp-refactor)
    (define-key map (kbd "i") #'qodeassist-lsp-refactor-with-instruction)
    (define-key map (kbd "c") #'qodeassist-lsp-chat)
    (define-key map (kbd "k") #'qodeassist-lsp-chat-cancel)
    (define-key map (kbd "s") #'qodeassist-lsp-status)
    map)
  "QodeAssist commands; bound to C-c q in lsp-mode buffers.")

(define-key lsp-mode-map (kbd "C-c q") qodeassist-lsp-command-map)

(provide 'qodeassist-lsp-mode)
;;; qodeassist-lsp-mode.el ends here
