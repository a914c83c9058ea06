;;; qodeassist-eglot.el --- QodeAssist (qodeassist-lsp) through Eglot  -*- lexical-binding: t; -*-

;; Package-Requires: ((emacs "29.1") (eglot "1.12"))
;; Keywords: tools, convenience, languages

;;; Commentary:

;; Runs the qodeassist-lsp language server with Eglot (built into Emacs 29+):
;;
;;   (add-to-list 'load-path "/path/to/qodeassist-lsp/editors/emacs")
;;   (require 'qodeassist-eglot)
;;   (add-hook 'python-mode-hook #'eglot-ensure)      ; or M-x eglot in a buffer
;;
;; What you get (Eglot has no inline "ghost text" completion):
;; - completion: the suggestion is one candidate of `completion-at-point' (C-M-i, or Corfu /
;;   Company popups), labelled "qodeassist"; picking it inserts the whole suggestion;
;; - quick refactor: `qodeassist-eglot-refactor' (C-c q r) on a region offers the instruction
;;   library as code actions; `qodeassist-eglot-refactor-with-instruction' (C-c q i) asks for
;;   your own instruction; the edit lands as one undo step;
;; - chat: `qodeassist-eglot-chat' (C-c q c) streams the answer into the *qodeassist-chat* buffer,
;;   with tool calls and file edits (a diff block: a applies, r rejects, u undoes it there);
;;   tool permission questions are asked with `completing-read' (qodeassist-chat.el);
;; - the chat's `diagnostics' tool sees what Flymake shows in the file buffers;
;; - status: `qodeassist-eglot-status' (C-c q s) and a mode-line lighter;
;; - a caret hint: after `qodeassist-eglot-cursor-idle-delay' idle seconds the server is told
;;   where point rests, and a model on this machine reads the completion request there ahead.
;;
;; Eglot runs ONE server per major mode and project: the entry added to `eglot-server-programs'
;; below replaces your usual server (pyright, clangd, ...) in `qodeassist-eglot-modes'.  Keep
;; that list to modes you want QodeAssist in, or use lsp-mode (qodeassist-lsp-mode.el), which runs
;; QodeAssist beside other servers.

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)
;; Beside this file: found also when only this file is loaded by name.
(require 'qodeassist-chat
         (expand-file-name "qodeassist-chat" (file-name-directory (macroexp-file-name))))

(defgroup qodeassist nil
  "QodeAssist LLM completion, refactor and chat through qodeassist-lsp."
  :group 'tools
  :prefix "qodeassist-")

(defun qodeassist-eglot--set (symbol value)
  "Set SYMBOL to VALUE and refresh the `eglot-server-programs' entry."
  (set-default symbol value)
  (when (fboundp 'qodeassist-eglot-register) (qodeassist-eglot-register)))

(defcustom qodeassist-eglot-command '("qodeassist-lsp")
  "Command line that starts the server (program and arguments)."
  :type '(repeat string)
  :set #'qodeassist-eglot--set)

(defcustom qodeassist-eglot-modes
  '(python-mode python-ts-mode rust-mode rust-ts-mode go-mode go-ts-mode
    c-mode c-ts-mode c++-mode c++-ts-mode js-mode js-ts-mode typescript-ts-mode
    lua-mode sh-mode bash-ts-mode)
  "Major modes in which Eglot starts qodeassist-lsp (instead of another server)."
  :type '(repeat symbol)
  :set #'qodeassist-eglot--set)

(defcustom qodeassist-eglot-initialization-options
  '(:qodeassist (:completion (:linesBefore 80 :linesAfter 40 :multiLine "smart")
                 :refactor (:linesBefore 80 :linesAfter 40)))
  "Sent as `initializationOptions': the sections of settings.toml as a plist."
  :type 'sexp
  :set #'qodeassist-eglot--set)

(defclass qodeassist-eglot-server (eglot-lsp-server) ()
  :documentation "An Eglot connection to qodeassist-lsp.")

(defun qodeassist-eglot--contact ()
  "The `eglot-server-programs' contact: class, command and initialization options."
  `(qodeassist-eglot-server
    ,@qodeassist-eglot-command
    :initializationOptions ,qodeassist-eglot-initialization-options))

(defun qodeassist-eglot-register ()
  "Put (or refresh) the qodeassist-lsp entry first in `eglot-server-programs'."
  (setq eglot-server-programs
        (cons (cons qodeassist-eglot-modes (qodeassist-eglot--contact))
              (cl-remove-if (lambda (entry)
                              (eq (car-safe (cdr entry)) 'qodeassist-eglot-server))
                            eglot-server-programs))))

(qodeassist-eglot-register)

;;;; Server

(defun qodeassist-eglot--server ()
  "The qodeassist-lsp server of the current buffer, or an error saying what to do."
  (let ((server (eglot-current-server)))
    (unless (cl-typep server 'qodeassist-eglot-server)
      (user-error "No qodeassist-lsp server here: run M-x eglot in a %s buffer"
                  (mapconcat #'symbol-name qodeassist-eglot-modes "/")))
    server))

(cl-defmethod eglot-handle-request
  ((_server qodeassist-eglot-server) (_method (eql 'qodeassist/diagnostics)) &key uri
   &allow-other-keys)
  "Answer the `diagnostics' tool: Flymake's diagnostics of URI (nil: all files)."
  (qodeassist-chat-diagnostics-answer
   uri #'qodeassist-chat-flymake-diagnostics
   (lambda () (eglot-path-to-uri buffer-file-name))))

(defun qodeassist-eglot--range (beg end)
  "The LSP range between BEG and END."
  (list :start (eglot--pos-to-lsp-position beg) :end (eglot--pos-to-lsp-position end)))

;;;; Caret hint

(defcustom qodeassist-eglot-cursor-idle-delay 0.5
  "Idle seconds after which the server is told where point rests, or nil.
With that hint (`qodeassist/didMoveCursor') the server reads the
completion request there into a local model's prompt cache, so the
first completion at that place answers sooner."
  :type '(choice (const :tag "Never" nil) number)
  :set (lambda (symbol value)
         (set-default symbol value)
         (when (fboundp 'qodeassist-eglot--start-cursor-timer)
           (qodeassist-eglot--start-cursor-timer))))

(defvar qodeassist-eglot--cursor-timer nil
  "The idle timer that runs `qodeassist-eglot--tell-cursor'.")

(defvar-local qodeassist-eglot--cursor-told nil
  "The (VERSION . POINT) of this buffer last told to the server.")

(defun qodeassist-eglot--tell-cursor ()
  "Tell this buffer's qodeassist-lsp server where point rests, once per place.
Return non-nil when a notification was sent."
  (let ((server (eglot-current-server)))
    (when (and (cl-typep server 'qodeassist-eglot-server) (jsonrpc-running-p server))
      (let ((place (cons eglot--versioned-identifier (point))))
        (unless (equal place qodeassist-eglot--cursor-told)
          (setq qodeassist-eglot--cursor-told place)
          ;; Eglot sends buffer changes lazily: the server must know the text the caret is in.
          (eglot--signal-textDocument/didChange)
          (jsonrpc-notify server :qodeassist/didMoveCursor
                          `(:textDocument ,(eglot--TextDocumentIdentifier)
                            :position ,(eglot--pos-to-lsp-position)))
          t)))))

(defun qodeassist-eglot--start-cursor-timer ()
  "(Re)start the caret hint's idle timer from its delay setting."
  (when qodeassist-eglot--cursor-timer (cancel-timer qodeassist-eglot--cursor-timer))
  (setq qodeassist-eglot--cursor-timer
        (and qodeassist-eglot-cursor-idle-delay
             (run-with-idle-timer qodeassist-eglot-cursor-idle-delay t
                                  #'qodeassist-eglot--tell-cursor))))

(qodeassist-eglot--start-cursor-timer)

;;;; Quick refactor

(defun qodeassist-eglot-refactor (beg end)
  "Pick a QodeAssist refactor for the region BEG..END and apply it.
The instruction library arrives as `refactor.rewrite' code actions;
the model runs when you pick one."
  (interactive (if (use-region-p)
                   (list (region-beginning) (region-end))
                 (list (point) (point))))
  (qodeassist-eglot--server)
  (eglot-code-actions beg end "refactor.rewrite" t))

(defun qodeassist-eglot-refactor-with-instruction (beg end instruction)
  "Rewrite the region BEG..END following INSTRUCTION (your own words).
The server applies the result with `workspace/applyEdit' as one undo step."
  (interactive
   (append (if (use-region-p)
               (list (region-beginning) (region-end))
             (list (point) (point)))
           (list (read-string "QodeAssist instruction: "))))
  (let ((server (qodeassist-eglot--server)))
    ;; Eglot sends buffer changes lazily: flush them so the server sees this very text.
    (eglot--signal-textDocument/didChange)
    (jsonrpc-async-request
     server :workspace/executeCommand
     `(:command "qodeassist.refactor"
       :arguments [(:uri ,(plist-get (eglot--TextDocumentIdentifier) :uri)
                    :range ,(qodeassist-eglot--range beg end)
                    :version ,eglot--versioned-identifier
                    ,@(unless (string-empty-p instruction) `(:instruction ,instruction)))])
     :success-fn (lambda (result)
                   (unless (eq (plist-get result :applied) t)
                     (message "QodeAssist: nothing applied %s"
                              (or (plist-get result :message) ""))))
     :error-fn (lambda (error)
                 (message "QodeAssist refactor failed: %s" (plist-get error :message)))
     :timeout 600)))

;;;; Status

(defvar qodeassist-eglot-status nil
  "The last `qodeassist/status' the server sent (a plist).")

(defun qodeassist-eglot--lighter ()
  "Mode-line text for the last status."
  (when qodeassist-eglot-status
    (let* ((problems (plist-get qodeassist-eglot-status :problems))
           (errors (or (plist-get problems :errors) 0)))
      (format " QA[%s%s]" (plist-get qodeassist-eglot-status :state)
              (if (and (numberp errors) (> errors 0)) (format " %d!" errors) "")))))

(add-to-list 'mode-line-misc-info '(:eval (qodeassist-eglot--lighter)) t)

(cl-defmethod eglot-handle-notification
  ((_server qodeassist-eglot-server) (_method (eql qodeassist/status)) &rest status)
  "Remember the STATUS the server sends after every configuration reload."
  (setq qodeassist-eglot-status status)
  (force-mode-line-update t))

(defun qodeassist-eglot-status ()
  "Ask the server for its status and show a one-line summary."
  (interactive)
  (let* ((status (jsonrpc-request (qodeassist-eglot--server) :qodeassist/status
                                  (make-hash-table)))
         (problems (plist-get status :problems)))
    (setq qodeassist-eglot-status status)
    (message "QodeAssist %s: %s agents, %s error(s), %s warning(s), config %s"
             (plist-get status :state) (plist-get status :agents)
             (plist-get problems :errors) (plist-get problems :warnings)
             (plist-get status :configRoot))
    status))

;;;; Chat (minimal)

(defvar qodeassist-eglot-chat-buffer "*qodeassist-chat*"
  "Name of the chat buffer.")

(defvar qodeassist-eglot--chat-id nil
  "The chat the next `qodeassist-eglot-chat' continues (nil: a new chat).")

(defvar qodeassist-eglot--chat-server nil
  "The server of the chat: the edit keys of the chat buffer talk to it.")

(defun qodeassist-eglot--chat-insert (&rest strings)
  "Append STRINGS to the chat buffer."
  (let ((qodeassist-chat-buffer-name qodeassist-eglot-chat-buffer))
    (apply #'qodeassist-chat-insert strings)))

(defun qodeassist-eglot--edit-file (edit-id action callback)
  "Send ACTION for EDIT-ID of the current chat.
CALLBACK gets the answer's status and message."
  (unless (and qodeassist-eglot--chat-server
               (jsonrpc-running-p qodeassist-eglot--chat-server))
    (user-error "QodeAssist: the chat's server is not running"))
  ;; Eglot sends buffer changes lazily: flush them, so the server checks an undo against
  ;; the text the buffers have now (an applied edit included).
  (dolist (buffer (eglot--managed-buffers qodeassist-eglot--chat-server))
    (with-current-buffer buffer (eglot--signal-textDocument/didChange)))
  (jsonrpc-async-request
   qodeassist-eglot--chat-server :qodeassist/chat/editFile
   `(:chatId ,qodeassist-eglot--chat-id :editId ,edit-id :action ,action)
   :success-fn (lambda (result)
                 (funcall callback (plist-get result :status) (plist-get result :message)))
   :error-fn (lambda (error)
               (message "QodeAssist: %s failed: %s" action (plist-get error :message)))
   :timeout 60))

(defun qodeassist-eglot-chat (message)
  "Send MESSAGE to the chat agent.
The answer streams into `qodeassist-eglot-chat-buffer'.  With a prefix
argument, start a new chat."
  (interactive (list (read-string "QodeAssist chat: ")))
  (when current-prefix-arg
    (setq qodeassist-eglot--chat-id nil)
    (qodeassist-chat-idle))
  (qodeassist-chat-begin-send "C-c q k")
  (let* ((server (qodeassist-eglot--server))
         (answer (condition-case err
                     (jsonrpc-request server :qodeassist/chat/send
                                      `(:message ,message
                                        ,@(when qodeassist-eglot--chat-id
                                            `(:chatId ,qodeassist-eglot--chat-id))))
                   (error (qodeassist-chat-idle)
                          (signal (car err) (cdr err))))))
    (setq qodeassist-eglot--chat-id (plist-get answer :chatId)
          qodeassist-eglot--chat-server server
          qodeassist-chat-edit-function #'qodeassist-eglot--edit-file)
    (qodeassist-eglot--chat-insert "\n>>> " message "\n\n")
    (display-buffer qodeassist-eglot-chat-buffer)
    answer))

(defun qodeassist-eglot-chat-cancel ()
  "Stop the answer being written."
  (interactive)
  (when qodeassist-eglot--chat-id
    (jsonrpc-request (qodeassist-eglot--server) :qodeassist/chat/cancel
                     `(:chatId ,qodeassist-eglot--chat-id))))

(cl-defmethod eglot-handle-notification
  ((_server qodeassist-eglot-server) (_method (eql qodeassist/chat/event))
   &rest event &key chatId &allow-other-keys)
  "Show one streamed chat EVENT of the current chat (CHATID) in the chat buffer."
  (when (or (null qodeassist-eglot--chat-id) (equal chatId qodeassist-eglot--chat-id))
    (let ((qodeassist-chat-buffer-name qodeassist-eglot-chat-buffer))
      (qodeassist-chat-show-event
       (lambda (&rest path)
         (let ((value event))
           (dolist (key path value) (setq value (plist-get value key)))))))))

(cl-defmethod eglot-client-capabilities :around ((_server qodeassist-eglot-server))
  "Say that `window/showMessageRequest' is answered.
Eglot asks with `completing-read'; the server asks tool permissions only
of clients that say so (the others are denied)."
  (let* ((capabilities (copy-sequence (cl-call-next-method)))
         (window (plist-get capabilities :window)))
    (plist-put capabilities :window
               (append window '(:showMessage
                                (:messageActionItem (:additionalPropertiesSupport :json-false)))))))

;;;; Keys

(defvar qodeassist-eglot-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "r") #'qodeassist-eglot-refactor)
    (define-key map (kbd "i") #'qodeassist-eglot-refactor-with-instruction)
    (define-key map (kbd "c") #'qodeassist-eglot-chat)
    (define-key map (kbd "k") #'qodeassist-eglot-chat-cancel)
    (define-key map (kbd "s") #'qodeassist-eglot-status)
    (define-key map (kbd "TAB") #'completion-at-point)
    map)
  "QodeAssist commands; bound to C-c q in Eglot-managed buffers.")

(define-key eglot-mode-map (kbd "C-c q") qodeassist-eglot-command-map)

(provide 'qodeassist-eglot)
;;; qodeassist-eglot.el ends here
