package jinja

import "strings"

// Content formats a server may pass message content in: "string" (the
// text parts joined into one string) or "openai" (the list of parts).
const (
	FormatString = "string"
	FormatOpenAI = "openai"
)

// ContentFormatVLLM is vLLM's "auto" detection of the chat-template
// content format, walked over our AST the way vLLM walks Jinja2's
// (vllm/renderers/hf.py of vLLM 0.32.0, _detect_content_format;
// server-preprocessing.md §1.3):
//
//   - the variables that hold the messages are "messages" plus, breadth
//     first, every {% set x = y %} whose right side is one of them, seen
//     through filters, tests and slices;
//   - a message variable is the target of a for loop over one of those;
//   - the format is "openai" when some for loop iterates over M.content or
//     M['content'] (again through filters, tests and slices) for a message
//     variable M, over a macro parameter that some call of the macro
//     passes M['content'] (0.32: Mistral's generated templates'
//     render_content(content=message['content'])), or over a variable
//     named content outside any macro (0.32), else "string".
//
// Where vLLM's walk trips an assert (a namespace or tuple target assigned
// from messages, a tuple loop target), it falls back to "string", and so
// does this. vLLM ignores scopes; so does this. One deviation: vLLM's
// breadth-first walk never ends on mutually assigned variables
// (a = b, b = a); this visits each name once.
func (t *Template) ContentFormatVLLM() string {
	var fors []*forNode
	var sets []*setNode
	collectStatements(t.nodes, &fors, &sets)

	// _iter_nodes_assign_var_or_elems(root, "messages")
	messageLists := []string{"messages"}
	seen := map[string]bool{"messages": true}
	for queue := []string{"messages"}; len(queue) > 0; {
		related := queue[0]
		queue = queue[1:]
		for _, s := range sets {
			if !isVarOrElemsAccess(s.value, related, "") {
				continue
			}
			if s.namespace != "" || strings.Contains(s.target, ",") {
				return FormatString // assert isinstance(lhs, Name) fails
			}
			if s.target != related && !seen[s.target] {
				seen[s.target] = true
				messageLists = append(messageLists, s.target)
				queue = append(queue, s.target)
			}
		}
	}
	// _iter_nodes_assign_messages_item: loop targets over those lists.
	var messageVars []string
	for _, f := range fors {
		for _, v := range messageLists {
			if isVarOrElemsAccess(f.iter, v, "") {
				if f.keyVar != "" {
					return FormatString // tuple target: the assert fails
				}
				messageVars = append(messageVars, f.valVar)
				break
			}
		}
	}
	// _iter_nodes_assign_content_item (vLLM 0.32): the first loop over
	// M['content'], over a macro parameter some call of the macro passes
	// M['content'] to, or over a variable named content outside macros.
	contentParams, inMacro := macroContentParams(t.nodes, messageVars)
	for _, f := range fors {
		found := false
		for _, v := range messageVars {
			if isVarOrElemsAccess(f.iter, v, "content") {
				found = true
				break
			}
		}
		if !found {
			if n, ok := f.iter.(*nameExpr); ok {
				found = contentParams[f][n.name] || (!inMacro[f] && n.name == "content")
			}
		}
		if found {
			if f.keyVar != "" {
				return FormatString // tuple target: the assert fails
			}
			return FormatOpenAI
		}
	}
	return FormatString
}

// macroContentParams is vLLM 0.32's tracking of macro parameters bound to
// message content: for each macro, the parameters some call of it (by
// name, anywhere in the template) passes M['content'] to, positionally or
// by keyword, for a message variable M; those sets by each loop inside
// the macro (a nested macro's own non-empty set wins, as vLLM assigns in
// document order), and every loop inside a macro.
func macroContentParams(nodes []node, messageVars []string) (map[*forNode]map[string]bool, map[*forNode]bool) {
	var macros []*macroNode
	var calls []*callExpr
	walkNodes(nodes, func(n node) {
		switch n := n.(type) {
		case *macroNode:
			macros = append(macros, n)
		case *callExpr:
			calls = append(calls, n)
		}
	})
	isContent := func(e expr) bool {
		for _, v := range messageVars {
			if isVarOrElemsAccess(e, v, "content") {
				return true
			}
		}
		return false
	}
	byLoop := map[*forNode]map[string]bool{}
	inMacro := map[*forNode]bool{}
	for _, m := range macros {
		params := map[string]bool{}
		for _, c := range calls {
			if fn, ok := c.fn.(*nameExpr); !ok || fn.name != m.name {
				continue
			}
			for i, a := range c.args {
				if i < len(m.params) && isContent(a) {
					params[m.params[i].name] = true
				}
			}
			for _, kw := range c.kwargs {
				for _, p := range m.params {
					if p.name == kw.name && isContent(kw.value) {
						params[kw.name] = true
					}
				}
			}
		}
		walkNodes(m.body, func(n node) {
			if f, ok := n.(*forNode); ok {
				inMacro[f] = true
				if len(params) > 0 {
					byLoop[f] = params
				}
			}
		})
	}
	return byLoop, inMacro
}

// walkNodes calls visit on every node and expression under nodes, macro
// bodies included, parents first (Jinja2's find_all).
func walkNodes(nodes []node, visit func(node)) {
	for _, n := range nodes {
		if n == nil {
			continue
		}
		visit(n)
		var children []node
		add := func(es ...expr) {
			for _, e := range es {
				if e != nil {
					children = append(children, e)
				}
			}
		}
		switch n := n.(type) {
		case *outputNode:
			add(n.expression)
		case *ifNode:
			for _, b := range n.branches {
				add(b.condition)
				children = append(children, b.body...)
			}
		case *forNode:
			add(n.iter, n.filterExpr)
			children = append(children, n.body...)
			children = append(children, n.elseBody...)
		case *setNode:
			add(n.value)
		case *setBlockNode:
			children = append(children, n.body...)
		case *macroNode:
			for _, p := range n.params {
				add(p.defaultVal)
			}
			children = append(children, n.body...)
		case *callNode:
			add(n.expr)
			children = append(children, n.body...)
		case *filterBlockNode:
			add(n.filter)
			children = append(children, n.body...)
		case *attrExpr:
			add(n.obj)
		case *itemExpr:
			add(n.obj, n.key)
		case *sliceExpr:
			add(n.obj, n.start, n.stop, n.step)
		case *unaryExpr:
			add(n.operand)
		case *binExpr:
			add(n.left, n.right)
		case *compareExpr:
			add(n.operands...)
		case *condExpr:
			add(n.condition, n.trueExpr, n.falseExpr)
		case *callExpr:
			add(n.fn)
			add(n.args...)
			for _, kw := range n.kwargs {
				add(kw.value)
			}
		case *filterExpr:
			add(n.expr)
			add(n.args...)
			for _, kw := range n.kwargs {
				add(kw.value)
			}
		case *testExpr:
			add(n.expr)
			add(n.args...)
		case *listExpr:
			add(n.items...)
		case *dictExpr:
			for _, p := range n.pairs {
				add(p.key, p.value)
			}
		case *splatExpr:
			add(n.x)
		}
		walkNodes(children, visit)
	}
}

// ContentFormatSGLang is SGLang's detection
// (python/sglang/srt/jinja_template_utils.py @1dc194d5,
// detect_jinja_template_content_format; server-preprocessing.md §5): a for
// loop over message/msg/m ['content'] or .content, with those literal
// names only, means "openai"; aliases are not followed.
func (t *Template) ContentFormatSGLang() string {
	var fors []*forNode
	var sets []*setNode
	collectStatements(t.nodes, &fors, &sets)
	for _, f := range fors {
		for _, v := range [...]string{"message", "msg", "m"} {
			if isVarOrElemsAccess(f.iter, v, "content") {
				return FormatOpenAI
			}
		}
	}
	return FormatString
}

// collectStatements lists the for loops and set statements in document
// order, depth first, like Jinja2's find_all.
func collectStatements(nodes []node, fors *[]*forNode, sets *[]*setNode) {
	for _, n := range nodes {
		switch n := n.(type) {
		case *forNode:
			*fors = append(*fors, n)
			collectStatements(n.body, fors, sets)
			collectStatements(n.elseBody, fors, sets)
		case *setNode:
			*sets = append(*sets, n)
		case *ifNode:
			for _, b := range n.branches {
				collectStatements(b.body, fors, sets)
			}
		case *setBlockNode:
			collectStatements(n.body, fors, sets)
		case *macroNode:
			collectStatements(n.body, fors, sets)
		case *callNode:
			collectStatements(n.body, fors, sets)
		case *filterBlockNode:
			collectStatements(n.body, fors, sets)
		}
	}
}

// isVarOrElemsAccess is vLLM's _is_var_or_elems_access: e is varname (key
// empty) or varname[key] / varname.key, possibly under filters, tests and
// slices.
func isVarOrElemsAccess(e expr, varname, key string) bool {
	switch n := e.(type) {
	case *filterExpr:
		return n.expr != nil && isVarOrElemsAccess(n.expr, varname, key)
	case *testExpr:
		return isVarOrElemsAccess(n.expr, varname, key)
	case *sliceExpr:
		return isVarOrElemsAccess(n.obj, varname, key)
	}
	if key == "" {
		return isVarAccess(e, varname)
	}
	switch n := e.(type) {
	case *itemExpr:
		lit, ok := n.key.(*litExpr)
		return ok && isVarAccess(n.obj, varname) && lit.val.IsString() && lit.val.AsString() == key
	case *attrExpr:
		return isVarAccess(n.obj, varname) && n.attr == key
	}
	return false
}

func isVarAccess(e expr, varname string) bool {
	n, ok := e.(*nameExpr)
	return ok && n.name == varname
}
