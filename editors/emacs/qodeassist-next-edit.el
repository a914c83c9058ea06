;;; qodeassist-next-edit.el --- Next-edit suggestions of qodeassist-lsp in Eglot and lsp-mode buffers -*- lexical-binding: t -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; After an edit pause, `qodeassist-next-edit-mode' asks the server for the next edit
;; (`textDocument/copilotInlineEdit', as Copilot's language server serves it) and shows it as
;; an overlay: the text it replaces in `qodeassist-next-edit-replaced' and the lines as they
;; read after the edit below them in `qodeassist-next-edit-added'.  Typing hides it.  In an
;; lsp-mode buffer an accepted inline completion (lsp-mode 10's ghost text) asks at once.
;;
;;   M-x qodeassist-next-edit-mode       follow the buffer (an Eglot or lsp-mode buffer of
;;                                       qodeassist-lsp)
;;   M-x qodeassist-next-edit-accept     apply the shown edit (one undo step) and report it
;;   M-x qodeassist-next-edit-jump       move point to it
;;   M-x qodeassist-next-edit-dismiss    hide it
;;
;; `qodeassist-next-edit-mode-map' binds C-c C-a (accept), C-c C-j (jump) and C-c C-k
;; (dismiss).  Works with Eglot (Emacs 29+) or lsp-mode (qodeassist-lsp-mode.el).

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)

;; lsp-mode is optional: these are used only in its buffers, where it is loaded.
(defvar lsp-mode)
(defvar lsp--cur-workspace)
(defvar lsp--cur-version)
(defvar lsp-inline-completion-accepted-functions)
(declare-function lsp-find-workspace "lsp-mode" (server-id &optional file-name))
(declare-function lsp-notify "lsp-mode" (method params))
(declare-function lsp-request-async "lsp-mode" (method params callback &rest args))
(declare-function lsp--text-document-identifier "lsp-mode" ())
(declare-function lsp--cur-position "lsp-mode" ())
(declare-function lsp--line-character-to-point "lsp-mode" (line character))

(defgroup qodeassist-next-edit nil
  "Next-edit suggestions of qodeassist-lsp."
  :group 'tools)

(defcustom qodeassist-next-edit-delay 0.5
  "Seconds after the last change before the next edit is asked for."
  :type 'number)

(defface qodeassist-next-edit-replaced '((t :inherit diff-removed))
  "Face of the text a next edit replaces.")

(defface qodeassist-next-edit-added '((t :inherit diff-added))
  "Face of the lines as they read after a next edit.")

(defvar-local qodeassist-next-edit--timer nil)
(defvar-local qodeassist-next-edit--overlay nil
  "The overlay on the text the shown edit replaces.")
(defvar-local qodeassist-next-edit--preview nil
  "The overlay at the end of the edit's last line showing the lines after it.")
(defvar-local qodeassist-next-edit--edit nil
  "The shown edit: a plist (:beg :end :text :command).")
(defvar-local qodeassist-next-edit--request 0
  "Counter of requests: an answer to an older one is ignored.")

;;;; The connection: Eglot's server or lsp-mode's qodeassist workspace

(defun qodeassist-next-edit--connection ()
  "This buffer's qodeassist-lsp connection: (lsp . WORKSPACE), (eglot . SERVER).
Nil when there is none.  lsp-mode runs qodeassist-lsp beside the language's own
server, so only its qodeassist workspace is asked."
  (let ((file (buffer-file-name)))
    (cond ((and (bound-and-true-p lsp-mode) file (fboundp 'lsp-find-workspace))
           (let ((workspace (lsp-find-workspace 'qodeassist file)))
             (and workspace (cons 'lsp workspace))))
          ((eglot-current-server)
           (cons 'eglot (eglot-current-server))))))

(defun qodeassist-next-edit--get (object key)
  "KEY (a keyword) of the JSON OBJECT: a plist (Eglot), a hash table (lsp-mode)."
  (if (hash-table-p object)
      (gethash (substring (symbol-name key) 1) object)
    (plist-get object key)))

(defun qodeassist-next-edit--notify (connection method params)
  "Send the notification METHOD (a keyword) with PARAMS over CONNECTION."
  (pcase (car connection)
    ('eglot (jsonrpc-notify (cdr connection) method params))
    ('lsp (let ((lsp--cur-workspace (cdr connection)))
            (lsp-notify (substring (symbol-name method) 1) params)))))

(defun qodeassist-next-edit--request (connection method params on-result)
  "Send the request METHOD (a keyword) with PARAMS over CONNECTION.
Call ON-RESULT with the answer; errors are ignored."
  (pcase (car connection)
    ('eglot (jsonrpc-async-request (cdr connection) method params
                                   :success-fn on-result :error-fn #'ignore :timeout 60))
    ('lsp (let ((lsp--cur-workspace (cdr connection)))
            (lsp-request-async (substring (symbol-name method) 1) params on-result
                               :error-handler #'ignore :mode 'detached)))))

(defun qodeassist-next-edit--version (connection)
  "The version of this buffer the server of CONNECTION last heard of."
  (if (eq (car connection) 'lsp) lsp--cur-version eglot--versioned-identifier))

(defun qodeassist-next-edit--document (connection)
  "The TextDocumentIdentifier of this buffer for CONNECTION."
  (list :uri (plist-get (if (eq (car connection) 'lsp)
                            (lsp--text-document-identifier)
                          (eglot--TextDocumentIdentifier))
                        :uri)))

(defun qodeassist-next-edit--point (connection position)
  "The point of the LSP POSITION (as CONNECTION's client parsed it)."
  (if (eq (car connection) 'lsp)
      (lsp--line-character-to-point (qodeassist-next-edit--get position :line)
                                    (qodeassist-next-edit--get position :character))
    (eglot--lsp-position-to-point position)))

;;;; Showing, asking, accepting

(defun qodeassist-next-edit-dismiss ()
  "Hide the shown next edit."
  (interactive)
  (dolist (overlay (list qodeassist-next-edit--overlay qodeassist-next-edit--preview))
    (when (overlayp overlay)
      (delete-overlay overlay)))
  (setq qodeassist-next-edit--overlay nil
        qodeassist-next-edit--preview nil
        qodeassist-next-edit--edit nil))

(defun qodeassist-next-edit--lines-after (beg end text)
  "The lines from BEG's line to END's line once TEXT replaces BEG..END."
  (save-excursion
    (concat (buffer-substring-no-properties (progn (goto-char beg) (line-beginning-position)) beg)
            text
            (buffer-substring-no-properties end (progn (goto-char end) (line-end-position))))))

(defun qodeassist-next-edit--show (connection edit)
  "Show EDIT, from a `textDocument/copilotInlineEdit' answer over CONNECTION."
  (qodeassist-next-edit-dismiss)
  (let* ((range (qodeassist-next-edit--get edit :range))
         (beg (qodeassist-next-edit--point connection (qodeassist-next-edit--get range :start)))
         (end (qodeassist-next-edit--point connection (qodeassist-next-edit--get range :end)))
         (text (qodeassist-next-edit--get edit :text))
         (after (qodeassist-next-edit--lines-after beg end text))
         (overlay (make-overlay beg end nil t nil))
         (eol (save-excursion (goto-char end) (line-end-position)))
         (preview (make-overlay eol eol nil t nil)))
    (overlay-put overlay 'face 'qodeassist-next-edit-replaced)
    (overlay-put preview 'after-string
                 (concat "\n" (propertize after 'face 'qodeassist-next-edit-added)))
    (setq qodeassist-next-edit--preview preview)
    (setq qodeassist-next-edit--overlay overlay
          qodeassist-next-edit--edit (list :beg beg :end end :text text
                                           :command (qodeassist-next-edit--get edit :command)))
    (qodeassist-next-edit--notify connection :textDocument/didShowInlineEdit
                                  (list :item edit))))

(defun qodeassist-next-edit-request ()
  "Ask the server for the next edit at point now."
  (interactive)
  (let ((connection (qodeassist-next-edit--connection))
        (buffer (current-buffer))
        (number (cl-incf qodeassist-next-edit--request)))
    (when connection
      (when (eq (car connection) 'eglot)
        ;; Eglot sends buffer changes lazily: flush them so the server sees this very text
        ;; (lsp-mode sends each change as it happens).
        (eglot--signal-textDocument/didChange))
      (let ((version (qodeassist-next-edit--version connection)))
        (qodeassist-next-edit--request
         connection :textDocument/copilotInlineEdit
         (list :textDocument (append (qodeassist-next-edit--document connection)
                                     (list :version version))
               :position (if (eq (car connection) 'lsp)
                             (lsp--cur-position)
                           (eglot--pos-to-lsp-position))
               :context (list :triggerKind 2))
         (lambda (result)
           (when (buffer-live-p buffer)
             (with-current-buffer buffer
               (let* ((edits (qodeassist-next-edit--get result :edits))
                      (edit (and (> (length edits) 0) (aref edits 0))))
                 (when (and edit
                            (= number qodeassist-next-edit--request)
                            (equal version (qodeassist-next-edit--version connection))
                            (equal version (qodeassist-next-edit--get
                                            (qodeassist-next-edit--get edit :textDocument)
                                            :version)))
                   (qodeassist-next-edit--show connection edit)))))))))))

(defun qodeassist-next-edit-jump ()
  "Move point to the shown next edit."
  (interactive)
  (if qodeassist-next-edit--edit
      (goto-char (plist-get qodeassist-next-edit--edit :beg))
    (user-error "No next edit is shown")))

(defun qodeassist-next-edit-accept ()
  "Apply the shown next edit and report it to the server."
  (interactive)
  (let ((edit qodeassist-next-edit--edit)
        (connection (qodeassist-next-edit--connection)))
    (unless edit
      (user-error "No next edit is shown"))
    (qodeassist-next-edit-dismiss)
    (save-excursion
      (goto-char (plist-get edit :beg))
      (delete-region (plist-get edit :beg) (plist-get edit :end))
      (insert (plist-get edit :text)))
    (let ((command (plist-get edit :command)))
      (when (and connection command)
        (qodeassist-next-edit--request
         connection :workspace/executeCommand
         (list :command (qodeassist-next-edit--get command :command)
               :arguments (qodeassist-next-edit--get command :arguments))
         #'ignore)))))

(defun qodeassist-next-edit--changed (&rest _)
  "Hide what is shown and ask again after `qodeassist-next-edit-delay'."
  (qodeassist-next-edit-dismiss)
  (when (timerp qodeassist-next-edit--timer)
    (cancel-timer qodeassist-next-edit--timer))
  (let ((buffer (current-buffer)))
    (setq qodeassist-next-edit--timer
          (run-with-idle-timer
           qodeassist-next-edit-delay nil
           (lambda ()
             (when (buffer-live-p buffer)
               (with-current-buffer buffer
                 (setq qodeassist-next-edit--timer nil)
                 (qodeassist-next-edit-request))))))))

(defun qodeassist-next-edit--accepted (&rest _)
  "Ask for the next edit at once: an inline completion was just accepted.
The accepted text is the newest edit the model sees; no pause is waited for."
  (when (timerp qodeassist-next-edit--timer)
    (cancel-timer qodeassist-next-edit--timer))
  (setq qodeassist-next-edit--timer nil)
  (qodeassist-next-edit-request))

(defun qodeassist-next-edit--focused ()
  "Tell the server this buffer is being looked at (`textDocument/didFocus')."
  (let ((connection (qodeassist-next-edit--connection)))
    (when connection
      (qodeassist-next-edit--notify connection :textDocument/didFocus
                                    (list :textDocument
                                          (qodeassist-next-edit--document connection))))))

(defvar qodeassist-next-edit-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-a") #'qodeassist-next-edit-accept)
    (define-key map (kbd "C-c C-j") #'qodeassist-next-edit-jump)
    (define-key map (kbd "C-c C-k") #'qodeassist-next-edit-dismiss)
    map)
  "Keys of `qodeassist-next-edit-mode'.")

;;;###autoload
(define-minor-mode qodeassist-next-edit-mode
  "Show qodeassist-lsp's next-edit suggestions in this Eglot or lsp-mode buffer."
  :lighter " NE"
  :keymap qodeassist-next-edit-mode-map
  (if qodeassist-next-edit-mode
      (progn
        (add-hook 'after-change-functions #'qodeassist-next-edit--changed nil t)
        ;; lsp-mode 10's ghost text: an accepted suggestion asks for the next edit at once.
        (add-hook 'lsp-inline-completion-accepted-functions #'qodeassist-next-edit--accepted
                  nil t)
        (qodeassist-next-edit--focused))
    (remove-hook 'after-change-functions #'qodeassist-next-edit--changed t)
    (remove-hook 'lsp-inline-completion-accepted-functions #'qodeassist-next-edit--accepted t)
    (when (timerp qodeassist-next-edit--timer)
      (cancel-timer qodeassist-next-edit--timer))
    (qodeassist-next-edit-dismiss)))

(provide 'qodeassist-next-edit)
;;; qodeassist-next-edit.el ends here
