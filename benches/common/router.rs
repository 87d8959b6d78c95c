//! A bench backend that sends the calls a predicate picks to the real model, the rest to a script.

use loreloom::llm::ScriptedBackend;
use loreloom::llm::backend::{Backend, BackendError, GenerateRequest, Generated};

/// Which calls go to the real model.
pub type Route = Box<dyn Fn(&GenerateRequest) -> bool + Send>;

pub struct Router {
    pub real: Box<dyn Backend>,
    pub script: ScriptedBackend,
    pub to_real: Route,
}

impl Backend for Router {
    fn name(&self) -> &'static str {
        "router"
    }

    fn generate(
        &mut self,
        request: &GenerateRequest,
        on_token: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Generated, BackendError> {
        if (self.to_real)(request) {
            self.real.generate(request, on_token)
        } else {
            self.script.generate(request, on_token)
        }
    }
}
